// 3D parallelism simulated end to end on two servers of four GPUs (t = 2, p = 2, d = 2): the
// same plan is visibly slower when its tensor-parallel all-reduces cross PCIe instead of an
// NVSwitch, or cross servers because of the rank order (Narayanan et al. 2021, SC, §3.3 and
// Figure 13); overlapping the data-parallel all-reduce with the last backwards shortens the
// iteration; the report's exposed communication names the kind that grew.
#include <gtest/gtest.h>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "sim/executor.h"
#include "strategies/plan.h"
#include "tests/scenario_text.h"

namespace stratasim {
namespace {

std::string ScenarioText(const std::string& fabric) {
  return "name: three-d\n" + testing::TwoA100Servers(4, fabric) +
         R"(model: {kind: gpt, layers: 8, hidden: 1024, heads: 16, sequence: 1024, vocabulary: 8192}
training:
  global_batch: 32
  micro_batch: 4
  precision: bf16
  iterations: {warmup: 1, measured: 1}
strategies:
  - {name: 3d, kind: 3d, options: {tensor: 2, stages: 2, data: 2}}
  - {name: 3d-flush, kind: 3d, options: {tensor: 2, stages: 2, data: 2, dp_overlap: false}}
  - {name: 3d-t4, kind: 3d, options: {tensor: 4, stages: 2, data: 1}}
  - {name: 3d-tp-across, kind: 3d, options: {tensor: 2, stages: 2, data: 2, rank_order: dpt}}
)";
}

using testing::kNvSwitchFabric;
// PCIe 4.0 x16 (31.5 GB/s per direction), two GPUs per switch, two sockets joined by UPI.
const char kPcie[] =
    R"(pcie: {gpus_per_switch: 2, sockets: 2, bandwidth: "31.5GB/s", latency: "1us",
             socket_link: {bandwidth: "20.8GB/s", latency: "1us"}})";

Metrics Simulated(const Scenario& s, const std::string& name) {
  for (const StrategySpec& spec : s.strategies) {
    if (spec.name != name) continue;
    const Plan plan = PlanStrategy(s, spec);
    const ExecutionTrace trace = sim::Simulate(plan.graph, s.cluster, s.simulation);
    return Evaluate(s, spec, plan.graph, trace, plan.samples_per_iteration, plan.tokens_per_sample)
        .metrics;
  }
  ADD_FAILURE() << "no strategy " << name;
  return {};
}

double Exposed(const Metrics& m, const std::string& kind) {
  auto it = m.exposed_comm_by_category.find(kind);
  return it == m.exposed_comm_by_category.end() ? 0 : it->second * m.iteration_time_s;
}

TEST(ThreeDSimulated, TensorParallelismOverPcieIsVisiblySlower) {
  const Scenario nvswitch = LoadScenarioText(ScenarioText(kNvSwitchFabric), "nvswitch.yaml");
  const Scenario pcie = LoadScenarioText(ScenarioText(kPcie), "pcie.yaml");
  const Metrics fast = Simulated(nvswitch, "3d");
  const Metrics slow = Simulated(pcie, "3d");
  RecordProperty("nvswitch_iteration_s", std::to_string(fast.iteration_time_s));
  RecordProperty("pcie_iteration_s", std::to_string(slow.iteration_time_s));
  EXPECT_GE(slow.iteration_time_s, 1.2 * fast.iteration_time_s);
  // The time lost is communication inside the server: the tensor-parallel all-reduces and the
  // all-gathers of the scattered pipeline sends ("pp") grow by most of it.
  const double grown =
      Exposed(slow, "tp") + Exposed(slow, "pp") - Exposed(fast, "tp") - Exposed(fast, "pp");
  EXPECT_GT(grown, 0.8 * (slow.iteration_time_s - fast.iteration_time_s));
}

TEST(ThreeDSimulated, TensorGroupsAcrossServersAreSlowerThanInside) {
  const Scenario s = LoadScenarioText(ScenarioText(kNvSwitchFabric), "nvswitch.yaml");
  const Metrics inside = Simulated(s, "3d");
  const Metrics across = Simulated(s, "3d-tp-across");
  RecordProperty("tpd_iteration_s", std::to_string(inside.iteration_time_s));
  RecordProperty("dpt_iteration_s", std::to_string(across.iteration_time_s));
  EXPECT_GE(across.iteration_time_s, 1.5 * inside.iteration_time_s);
  EXPECT_GT(Exposed(across, "tp"), 5 * Exposed(inside, "tp"));
}

TEST(ThreeDSimulated, OverlappedDataParallelAllReduceShortensTheIteration) {
  const Scenario s = LoadScenarioText(ScenarioText(kNvSwitchFabric), "nvswitch.yaml");
  const Metrics overlap = Simulated(s, "3d");
  const Metrics flush = Simulated(s, "3d-flush");
  RecordProperty("overlap_iteration_s", std::to_string(overlap.iteration_time_s));
  RecordProperty("flush_iteration_s", std::to_string(flush.iteration_time_s));
  EXPECT_LT(overlap.iteration_time_s, flush.iteration_time_s);
  EXPECT_LT(Exposed(overlap, "dp"), Exposed(flush, "dp"));
}

}  // namespace
}  // namespace stratasim
