// Scenario text shared by the integration tests that load a scenario from YAML.
#ifndef STRATASIM_TESTS_SCENARIO_TEXT_H_
#define STRATASIM_TESTS_SCENARIO_TEXT_H_

#include <string>

namespace stratasim::testing {

// A server's NVSwitch: 12 NVLink3 links x 25 GB/s per direction per GPU (A100).
inline constexpr char kNvSwitchFabric[] = R"(nvswitch: {bandwidth: "300GB/s", latency: "1us"})";

// The `cluster:` section of a scenario: two servers of four A100s, their GPUs joined by
// `fabric` (a server's key, kNvSwitchFabric by default), each with `nics` 100 Gb/s NICs, on one
// switch.
inline std::string TwoA100Servers(int nics, const std::string& fabric = kNvSwitchFabric) {
  return R"(cluster:
  servers:
    - name: box
      count: 2
      gpu: A100-SXM4-80GB
      gpus_per_server: 4
      )" +
         fabric +
         R"(
      nics: {count: )" +
         std::to_string(nics) + R"(, bandwidth: "100Gb/s", latency: "2us"}
  network: {kind: single_switch, latency: "1us"}
)";
}

// The `model:` section of a 2-layer MoE with one expert per GPU of TwoA100Servers and 2048
// tokens per GPU: expert compute outweighs moving an expert, so skewed routing gets experts
// replicated.
inline constexpr char kSmallMoeModel[] =
    "model: {kind: moe, layers: 2, hidden: 1024, ffn_hidden: 4096, heads: 16, sequence: 2048,\n"
    "        vocabulary: 1024, experts: 8, top_k: 1}\n";

}  // namespace stratasim::testing

#endif  // STRATASIM_TESTS_SCENARIO_TEXT_H_
