// Sharded data parallelism and tensor parallelism simulated end to end: ZeRO-3 trades 1.5x
// DDP's communication for a fraction of its memory (Rajbhandari et al. 2020, §7), and
// Megatron-style tensor parallelism, whose all-reduces sit on the critical path, needs the
// NVSwitch inside a server (Shoeybi et al. 2019, §5: "tensor model parallelism within a node").
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "sim/executor.h"
#include "strategies/data/ddp.h"
#include "strategies/sharded/zero.h"
#include "strategies/tensor/megatron.h"

namespace stratasim {
namespace {

std::string ScenarioText(const std::string& fabric, int global_batch, int micro_batch) {
  return R"(
name: sharded-tensor
cluster:
  servers:
    - name: box
      count: 1
      gpu: A100-SXM4-80GB
      gpus_per_server: 8
      )" +
         fabric + R"(
model: {kind: gpt, layers: 4, hidden: 1024, heads: 16, sequence: 512, vocabulary: 8192}
training:
  global_batch: )" +
         std::to_string(global_batch) + R"(
  micro_batch: )" +
         std::to_string(micro_batch) + R"(
  precision: bf16
  iterations: {warmup: 1, measured: 1}
strategies:
  - {name: ddp, kind: ddp}
  - {name: zero3, kind: zero3}
  - {name: zero3-no-prefetch, kind: zero3, options: {prefetch: false}}
  - {name: tp8, kind: tensor, options: {degree: 8}}
)";
}

const char kNvSwitch[] = R"(nvswitch: {bandwidth: "300GB/s", latency: "1us"})";
// PCIe 4.0 x16 (31.5 GB/s per direction), two GPUs per switch, two sockets joined by UPI.
const char kPcie[] =
    R"(pcie: {gpus_per_switch: 2, sockets: 2, bandwidth: "31.5GB/s", latency: "1us",
             socket_link: {bandwidth: "20.8GB/s", latency: "1us"}})";

// Plans strategy `name` of `s` with its planner, simulates and evaluates it as RunStrategies
// (cli/run_scenario.h) does.
StrategyRun PlanAndSimulate(const Scenario& s, const std::string& name) {
  const StrategySpec* spec = nullptr;
  for (const StrategySpec& x : s.strategies) {
    if (x.name == name) spec = &x;
  }
  EXPECT_NE(spec, nullptr);
  const Plan plan = spec->kind == "ddp"     ? PlanDdp(s, *spec)
                    : spec->kind == "zero3" ? PlanZero(s, *spec)
                                            : PlanTensorParallel(s, *spec);
  StrategyRun run;
  run.trace = sim::Simulate(plan.graph, s.cluster, s.simulation);
  run.result =
      Evaluate(s, *spec, plan.graph, run.trace, plan.samples_per_iteration, plan.tokens_per_sample);
  run.graph = plan.graph;
  return run;
}

// Bytes each member moves in one iteration, ring volumes (reduce-scatter, all-gather
// (N-1)/N of the buffer; all-reduce 2(N-1)/N).
double MovedPerRankPerIteration(const TaskGraph& g) {
  double moved = 0;
  int iterations = 0;
  for (const Collective& c : g.collectives()) {
    const double n = static_cast<double>(c.ranks.size());
    moved += (c.kind == CollectiveKind::kAllReduce ? 2 : 1) * (n - 1) / n * c.bytes;
    iterations = std::max(iterations, g.task(c.members[0]).iteration + 1);
  }
  return moved / iterations;
}

TEST(ShardedTensor, Zero3UsesLessMemoryThanDdpAndMovesOneAndAHalfTimesAsMuch) {
  const Scenario s = LoadScenarioText(ScenarioText(kNvSwitch, 16, 2), "sharded-tensor.yaml");
  const StrategyRun ddp = PlanAndSimulate(s, "ddp");
  const StrategyRun zero3 = PlanAndSimulate(s, "zero3");
  ASSERT_TRUE(ddp.result.ok && zero3.result.ok);
  EXPECT_GT(zero3.result.metrics.iteration_time_s, 0);
  RecordProperty("ddp_iteration_s", std::to_string(ddp.result.metrics.iteration_time_s));
  RecordProperty("zero3_iteration_s", std::to_string(zero3.result.metrics.iteration_time_s));
  RecordProperty("ddp_peak_bytes", std::to_string(ddp.result.metrics.peak_memory_bytes[0]));
  RecordProperty("zero3_peak_bytes", std::to_string(zero3.result.metrics.peak_memory_bytes[0]));
  for (int r = 0; r < 8; ++r) {
    EXPECT_LT(zero3.result.metrics.peak_memory_bytes[r], ddp.result.metrics.peak_memory_bytes[r]);
  }
  EXPECT_NEAR(MovedPerRankPerIteration(zero3.graph) / MovedPerRankPerIteration(ddp.graph), 1.5,
              1e-9);
}

TEST(ShardedTensor, Zero3PrefetchHidesAllGathersBehindCompute) {
  const Scenario s = LoadScenarioText(ScenarioText(kNvSwitch, 16, 2), "sharded-tensor.yaml");
  const StrategyRun on = PlanAndSimulate(s, "zero3");
  const StrategyRun off = PlanAndSimulate(s, "zero3-no-prefetch");
  ASSERT_TRUE(on.result.ok && off.result.ok);
  RecordProperty("prefetch_iteration_s", std::to_string(on.result.metrics.iteration_time_s));
  RecordProperty("no_prefetch_iteration_s", std::to_string(off.result.metrics.iteration_time_s));
  EXPECT_LT(on.result.metrics.iteration_time_s, off.result.metrics.iteration_time_s);
  EXPECT_LT(on.result.metrics.exposed_comm_fraction, off.result.metrics.exposed_comm_fraction);
}

TEST(ShardedTensor, TensorParallelismAcrossPcieIsMuchSlowerThanOverNvSwitch) {
  const Scenario nvswitch = LoadScenarioText(ScenarioText(kNvSwitch, 4, 4), "nvswitch.yaml");
  const Scenario pcie = LoadScenarioText(ScenarioText(kPcie, 4, 4), "pcie.yaml");
  const StrategyRun fast = PlanAndSimulate(nvswitch, "tp8");
  const StrategyRun slow = PlanAndSimulate(pcie, "tp8");
  ASSERT_TRUE(fast.result.ok && slow.result.ok);
  RecordProperty("nvswitch_iteration_s", std::to_string(fast.result.metrics.iteration_time_s));
  RecordProperty("pcie_iteration_s", std::to_string(slow.result.metrics.iteration_time_s));
  EXPECT_GE(slow.result.metrics.iteration_time_s, 1.5 * fast.result.metrics.iteration_time_s)
      << "nvswitch " << fast.result.metrics.iteration_time_s << " s, pcie "
      << slow.result.metrics.iteration_time_s << " s";
}

}  // namespace
}  // namespace stratasim
