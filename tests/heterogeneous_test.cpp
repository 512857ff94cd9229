// A heterogeneous cluster: a DDP step is as slow as its slowest GPUs, and the trace shows the
// faster ranks waiting in the gradient all-reduce.
#include <gtest/gtest.h>

#include "cli/run_scenario.h"
#include "core/scenario.h"

namespace stratasim {
namespace {

std::string ScenarioText(const std::string& second_gpu) {
  return R"(
name: hetero
cluster:
  servers:
    - name: fast
      count: 1
      gpu: A100-SXM4-80GB
      gpus_per_server: 4
      nvswitch: {bandwidth: "300GB/s", latency: "1us"}
      nics: {count: 4, bandwidth: "200Gb/s", latency: "2us"}
    - name: second
      count: 1
      gpu: )" +
         second_gpu + R"(
      gpus_per_server: 4
      nvswitch: {bandwidth: "300GB/s", latency: "1us"}
      nics: {count: 4, bandwidth: "200Gb/s", latency: "2us"}
  network: {kind: single_switch, latency: "1us"}
model: {preset: gpt2-small}
training:
  global_batch: 32
  micro_batch: 4
  precision: fp16
  iterations: {warmup: 1, measured: 2}
strategies:
  - {name: ddp, kind: ddp}
)";
}

StrategyRun RunDdp(const std::string& second_gpu) {
  Scenario s = LoadScenarioText(ScenarioText(second_gpu), "hetero.yaml");
  std::vector<StrategyRun> runs = RunStrategies(s, {}, WholeRuns());
  EXPECT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].result.ok) << runs[0].result.error;
  return std::move(runs[0]);
}

// Mean time ranks [lo, hi) waited in the first bucket's all-reduce for the last member to join.
double MeanWait(const StrategyRun& run, int lo, int hi) {
  const Collective& first = run.graph.collectives().at(0);
  double wait = 0;
  for (size_t i = 0; i < first.ranks.size(); ++i) {
    if (first.ranks[i] < lo || first.ranks[i] >= hi) continue;
    const TraceRecord& r = run.trace.records.at(first.members[i]);
    wait += r.peers_joined_s - r.start_s;
  }
  return wait / (hi - lo);
}

TEST(Heterogeneous, SlowerServerSlowsTheStepAndFastRanksWait) {
  const StrategyRun same = RunDdp("A100-SXM4-80GB");
  const StrategyRun mixed = RunDdp("V100-SXM2");
  // V100: 125 TFLOP/s FP16 against the A100's 312; compute dominates this step.
  EXPECT_GT(mixed.result.metrics.iteration_time_s, 1.5 * same.result.metrics.iteration_time_s);
  // In the mixed cluster the A100 ranks (0-3) reach the all-reduce early and wait for the
  // V100 ranks (4-7), which start moving data as soon as they join.
  const double fast_wait = MeanWait(mixed, 0, 4), slow_wait = MeanWait(mixed, 4, 8);
  EXPECT_GT(fast_wait, 1e-3) << "A100 ranks should wait for the V100 ranks";
  EXPECT_LT(slow_wait, 0.01 * fast_wait);
  // In the homogeneous cluster nobody waits long.
  EXPECT_LT(MeanWait(same, 0, 8), 0.01 * fast_wait);
}

}  // namespace
}  // namespace stratasim
