// The loader's bounds (issue 17, docs/limits.md): link figures, efficiencies, counts, names,
// documents and file sizes. Each case asserts where the error is and the rule it states.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/calibration.h"
#include "core/error.h"
#include "core/link_efficiency.h"
#include "core/scenario.h"
#include "core/scenario_test_util.h"

namespace stratasim {
namespace {

const char kBase[] = R"(name: base
cluster:
  servers:
    - name: dgx
      count: 2
      gpu: H100-SXM5
      gpus_per_server: 8
      nvswitch: {bandwidth: "450GB/s", latency: "1us"}
      nics: {count: 8, bandwidth: "400Gb/s", latency: "1us"}
  network: {kind: leaf_spine, servers_per_leaf: 1, latency: "1us"}
model: {preset: gpt2-medium}
training: {global_batch: 64, micro_batch: 4, seed: 7}
strategies:
  - {name: ddp, kind: ddp}
)";

std::string Base(const std::string& from, const std::string& to) {
  return testing::Replace(kBase, from, to);
}

using testing::ErrorOf;
using testing::ExpectError;

TEST(LinkEfficiency, DefaultsFollowNcclPerGeneration) {
  // NCCL topo.h: 20.6 GB/s per NVLink 4 link of 25, 20 of 25 for NVLink 2 and 3.
  EXPECT_DOUBLE_EQ(DefaultLinkEfficiency(LinkKind::kNvSwitch, "H100-SXM5"), 20.6 / 25);
  EXPECT_DOUBLE_EQ(DefaultLinkEfficiency(LinkKind::kNvSwitch, "A100-SXM4-80GB"), 0.8);
  EXPECT_DOUBLE_EQ(DefaultLinkEfficiency(LinkKind::kNvLink, "V100-SXM2"), 0.8);
  EXPECT_DOUBLE_EQ(DefaultLinkEfficiency(LinkKind::kNvLink, "RTX3090"), 12 / 14.0625);
  EXPECT_DOUBLE_EQ(DefaultLinkEfficiency(LinkKind::kNvLink, "MyCustomGpu"), 0.8);
  EXPECT_DOUBLE_EQ(DefaultLinkEfficiency(LinkKind::kPcie, "V100-SXM2"), 12 / 15.75);
  EXPECT_DOUBLE_EQ(DefaultLinkEfficiency(LinkKind::kNic, "H100-SXM5"), 0.96);
  EXPECT_DOUBLE_EQ(DefaultLinkEfficiency(LinkKind::kSocket, "H100-SXM5"), 1.0);
  EXPECT_EQ(ParseLinkKind("nic"), LinkKind::kNic);
  EXPECT_FALSE(ParseLinkKind("nics").has_value());
}

TEST(LinkEfficiency, ScenarioDerivesTheAchievableRate) {
  const Scenario s = LoadScenarioText(kBase, "t.yaml");
  const LinkSpec& nvs = s.cluster.groups[0].nvswitch->link;
  EXPECT_DOUBLE_EQ(nvs.line_Bps, 450e9);
  EXPECT_DOUBLE_EQ(nvs.bandwidth_Bps, 18 * 20.6e9);  // NCCL's 370.8 GB/s for 18 links
  EXPECT_FALSE(nvs.efficiency_given);
  EXPECT_DOUBLE_EQ(s.cluster.groups[0].nics.link.bandwidth_Bps, 50e9 * 0.96);
}

TEST(LinkEfficiency, ScenarioMayGiveItsOwn) {
  const Scenario s =
      LoadScenarioText(Base(R"(nvswitch: {bandwidth: "450GB/s", latency: "1us"})",
                            R"(nvswitch: {bandwidth: "450GB/s", latency: "1us", efficiency: 1})"),
                       "t.yaml");
  EXPECT_DOUBLE_EQ(s.cluster.groups[0].nvswitch->link.bandwidth_Bps, 450e9);
  EXPECT_TRUE(s.cluster.groups[0].nvswitch->link.efficiency_given);
  ExpectError(ErrorOf(Base(R"(latency: "1us"})", R"(latency: "1us", efficiency: 0.001})")), 8, 68,
              "cluster.servers[0].nvswitch.efficiency",
              "must be a number in [0.01, 1] (a fraction of the peak)");
}

TEST(Limits, LinkFiguresAreBounded) {
  ExpectError(ErrorOf(Base(R"(latency: "1us"})", R"(latency: "1e300s"})")), 8, 49,
              "cluster.servers[0].nvswitch.latency", "must be in [0s, 1s] (docs/limits.md)");
  ExpectError(ErrorOf(Base(R"("450GB/s")", R"("1e-300GB/s")")), 8, 29,
              "cluster.servers[0].nvswitch.bandwidth",
              "must be in [1kB/s, 1PB/s] (docs/limits.md)");
  ExpectError(ErrorOf(Base(R"("450GB/s")", R"("1e20GB/s")")), 8, 29,
              "cluster.servers[0].nvswitch.bandwidth",
              "must be in [1kB/s, 1PB/s] (docs/limits.md)");
  ExpectError(ErrorOf(Base("latency: \"1us\"}\nmodel",
                           "latency: \"1us\", oversubscription: 1e300}\nmodel")),
              10, 86, "cluster.network.oversubscription",
              "must be a number in [1, 1000] or a ratio like \"2:1\"");
  ExpectError(ErrorOf(Base("seed: 7}", "seed: 7}\nsimulation: {compute_efficiency: 1e-300}")), 13,
              34, "simulation.compute_efficiency",
              "must be a number in [0.01, 1] (a fraction of the peak)");
}

TEST(Limits, CountsAbove32BitsSayTheLimit) {
  ExpectError(ErrorOf(Base("global_batch: 64", "global_batch: 2147483648")), 12, 26,
              "training.global_batch",
              "must be at most 2147483647 (counts are 32-bit; docs/limits.md)");
  ExpectError(ErrorOf(Base("global_batch: 64", "global_batch: 0")), 12, 26, "training.global_batch",
              "must be an integer >= 1");
}

TEST(Limits, NamesStayInsideTheOutputFolder) {
  const std::string rule =
      "must match [A-Za-z0-9_-][A-Za-z0-9._-]* and be at most 128 characters (it names output "
      "files)";
  ExpectError(ErrorOf(Base("name: base", "name: ..")), 1, 7, "name", rule);
  ExpectError(ErrorOf(Base("name: base", "name: .hidden")), 1, 7, "name", rule);
  ExpectError(ErrorOf(Base("{name: ddp,", "{name: ../ddp,")), 14, 12, "strategies[0].name", rule);
  ExpectError(ErrorOf(Base("name: base", "name: " + std::string(129, 'a'))), 1, 7, "name", rule);
  EXPECT_NO_THROW(LoadScenarioText(Base("name: base", "name: " + std::string(128, 'a')), "t"));
}

TEST(Limits, LongValuesAreCutInMessages) {
  const std::string digits(1000000, '9');
  const ConfigError e = ErrorOf(Base("seed: 7", "seed: " + digits));
  EXPECT_EQ(e.value().size(), digits.size());  // kept whole for callers
  const std::string what = e.what();
  EXPECT_LT(what.size(), 300u) << what.substr(0, 300);
  EXPECT_NE(what.find("... (1000000 bytes)"), std::string::npos) << what.substr(0, 300);
}

TEST(Limits, OneDocumentPerFile) {
  ExpectError(ErrorOf(std::string(kBase) + "---\nname: second\n"), 15, 1, "",
              "a second YAML document (after ---): the file must hold exactly one");
  // A broken second document is a syntax error there, not silently ignored.
  const ConfigError broken = ErrorOf(std::string(kBase) + "---\n[unclosed\n");
  EXPECT_EQ(broken.where().line, 17) << broken.what();
}

TEST(Limits, LoneCarriageReturnsAreLocated) {
  std::string mac = "# a comment\rname: base\r";
  ExpectError(ErrorOf(mac), 1, 12, "",
              "a carriage return (CR) alone ends a line here; use LF or CR LF line endings");
  // CR LF is fine.
  std::string dos = kBase;
  for (size_t i = 0; (i = dos.find('\n', i)) != std::string::npos; i += 2) dos.insert(i, "\r");
  EXPECT_NO_THROW(LoadScenarioText(dos, "t.yaml"));
}

TEST(Limits, InputFilesAreReadBounded) {
  try {
    LoadScenarioFile("/dev/zero");
    FAIL() << "/dev/zero loaded";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, "/dev/zero");
    EXPECT_EQ(e.rule(), "larger than 4 MiB, the limit for a scenario file (docs/limits.md)");
  }
  try {
    LoadCalibrationFile("/dev/zero");
    FAIL() << "/dev/zero loaded";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.rule(), "larger than 4 MiB, the limit for a calibration file (docs/limits.md)");
  }
}

}  // namespace
}  // namespace stratasim
