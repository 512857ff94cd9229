// A plan simulated while it is planned (docs/scale.md, "Iterations") is the same simulation as
// the whole plan: the same tasks at the same times, up to rounding (a fused chain of kernels
// stops before the newest iteration taken in, and fused parts' times are rounded
// differently). The figures summed piece by piece differ in their last bits too.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/run_scenario.h"
#include "core/scenario.h"

namespace stratasim {
namespace {

std::string Cluster() {
  return "name: streamed\ncluster:\n  servers:\n    - name: dgx\n      count: 2\n"
         "      gpu: A100-SXM4-80GB\n      gpus_per_server: 8\n"
         "      nvswitch: {bandwidth: \"300GB/s\", latency: \"1us\"}\n"
         "      nics: {count: 8, bandwidth: \"200Gb/s\", latency: \"2us\"}\n"
         "  network: {kind: rail_optimized}\n";
}

// 1 warm-up and 11 measured iterations: enough tasks that the executor retires them in
// batches, sealing the metrics between them, before the end.
const char kGpt[] =
    "model: {kind: gpt, layers: 4, hidden: 1024, heads: 16, sequence: 512, vocabulary: 8192}\n"
    "training: {global_batch: 64, micro_batch: 2, precision: bf16, "
    "iterations: {warmup: 1, measured: 11}}\n";

// `streamed`: whether the run is long enough to be streamed (more than three iterations).
void ExpectSameRuns(const std::string& text, bool streamed_run = true) {
  const Scenario s = LoadScenarioText(text, "streamed.yaml");
  const std::vector<StrategyRun> streamed = RunStrategies(s, {});
  const std::vector<StrategyRun> whole = RunStrategies(s, {}, WholeRuns());
  ASSERT_EQ(streamed.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    const StrategyResult& a = streamed[i].result;
    const StrategyResult& b = whole[i].result;
    SCOPED_TRACE(b.name);
    ASSERT_TRUE(a.ok) << a.error;
    ASSERT_TRUE(b.ok) << b.error;
    EXPECT_EQ(streamed[i].streamed, streamed_run && b.name != "2bw");
    EXPECT_EQ(a.tasks, b.tasks);
    EXPECT_NEAR(a.metrics.iteration_time_s, b.metrics.iteration_time_s,
                1e-12 * b.metrics.iteration_time_s);
    EXPECT_NEAR(a.metrics.model_flops_per_iteration, b.metrics.model_flops_per_iteration,
                1e-12 * b.metrics.model_flops_per_iteration);
    EXPECT_NEAR(a.metrics.exposed_comm_fraction, b.metrics.exposed_comm_fraction, 1e-12);
    EXPECT_NEAR(a.metrics.idle_fraction, b.metrics.idle_fraction, 1e-12);
    EXPECT_EQ(a.metrics.peak_memory_bytes, b.metrics.peak_memory_bytes);
    EXPECT_EQ(a.peak_memory_per_stage_bytes, b.peak_memory_per_stage_bytes);
    // The pipeline figures: the plan's, and the stages' as measured piece by piece.
    ASSERT_EQ(a.pipeline.has_value(), b.pipeline.has_value());
    if (a.pipeline) {
      EXPECT_EQ(a.pipeline->partition, b.pipeline->partition);
      EXPECT_EQ(a.pipeline->stages, b.pipeline->stages);
    }
    ASSERT_EQ(a.metrics.stage_compute_s.size(), b.metrics.stage_compute_s.size());
    ASSERT_EQ(a.metrics.stage_bubble_fraction.size(), b.metrics.stage_bubble_fraction.size());
    for (size_t k = 0; k < b.metrics.stage_compute_s.size(); ++k) {
      EXPECT_NEAR(a.metrics.stage_compute_s[k], b.metrics.stage_compute_s[k],
                  1e-9 * b.metrics.stage_compute_s[k]);
      EXPECT_NEAR(a.metrics.stage_bubble_fraction[k], b.metrics.stage_bubble_fraction[k], 1e-9);
    }
    EXPECT_NEAR(a.metrics.startup_s, b.metrics.startup_s, 1e-9 * b.metrics.iteration_time_s);
    ASSERT_EQ(a.moe.has_value(), b.moe.has_value());
    if (a.moe) {
      ASSERT_EQ(a.moe->iteration_s.size(), b.moe->iteration_s.size());
      for (size_t k = 0; k < a.moe->iteration_s.size(); ++k) {
        EXPECT_NEAR(a.moe->iteration_s[k], b.moe->iteration_s[k], 1e-12 * b.moe->iteration_s[k]);
      }
      EXPECT_NEAR(a.moe->exposed_a2a_s, b.moe->exposed_a2a_s, 1e-12);
      EXPECT_EQ(a.moe->load_balance_ratio, b.moe->load_balance_ratio);
    }
    EXPECT_EQ(a.notes, b.notes);
  }
}

TEST(StreamedRun, DataShardedAndTensorParallelAreTheWholeSimulation) {
  ExpectSameRuns(Cluster() + kGpt +
                 "strategies:\n"
                 "  - {name: ddp, kind: ddp}\n"
                 "  - {name: zero3, kind: zero3}\n"
                 "  - {name: tp, kind: tensor, options: {degree: 8}}\n");
}

TEST(StreamedRun, PipelinesAreTheWholeSimulation) {
  ExpectSameRuns(
      Cluster() + kGpt +
      "strategies:\n"
      "  - {name: 1f1b, kind: 3d, options: {tensor: 2, stages: 4, data: 2}}\n"
      "  - {name: interleaved, kind: 3d, options: {tensor: 2, stages: 2, data: 4, "
      "schedule: interleaved, virtual_stages: 2}}\n"
      // PipeDream-2BW plans its iterations as one round, not in order: simulated
      // whole.
      "  - {name: 2bw, kind: pipeline, options: {stages: 4, schedule: pipedream_2bw}}\n");
}

TEST(StreamedRun, MixtureOfExpertsIsTheWholeSimulation) {
  auto scenario = [](const std::string& iterations) {
    return Cluster() +
           "model: {kind: moe, layers: 2, hidden: 512, heads: 8, sequence: 256, "
           "vocabulary: 1000, experts: 16}\n"
           "training: {global_batch: 32, micro_batch: 2, iterations: " +
           iterations +
           "}\n"
           "strategies:\n"
           "  - {name: baseline, kind: deepspeed-moe}\n"
           "  - {name: fastermoe, kind: fastermoe}\n"
           "  - {name: pro-prophet, kind: pro-prophet}\n";
  };
  ExpectSameRuns(scenario("{warmup: 1, measured: 5}"));
  // Two iterations, one of them warm-up: planned whole, not from the sizing plan, whose
  // iterations are all measured (the MoE figures average the measured ones).
  ExpectSameRuns(scenario("{warmup: 1, measured: 1}"), false);
}

// The Chrome trace a streamed run writes as it goes has every task of every iteration.
TEST(StreamedRun, WritesTheChromeTraceAsItGoes) {
  const Scenario s = LoadScenarioText(
      Cluster() + kGpt + "strategies:\n  - {name: ddp, kind: ddp}\n", "streamed.yaml");
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("stratasim-streamed-" + std::to_string(getpid()));
  RunOptions options;
  options.trace_dir = dir.string();
  std::vector<StrategyRun> runs = RunStrategies(s, {}, options);
  ASSERT_TRUE(runs[0].result.ok) << runs[0].result.error;
  ASSERT_TRUE(runs[0].trace_file);
  runs[0].trace_file->Commit();
  std::ifstream in(dir / "ddp.trace.json");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json trace = nlohmann::json::parse(text.str());
  long long complete = 0, counters = 0;
  int highest_iteration = -1;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "X") {
      ++complete;
      highest_iteration = std::max(highest_iteration, e["args"]["iteration"].get<int>());
    }
    if (e["ph"] == "C" && e["name"] == "memory") ++counters;  // not the Links process's
  }
  EXPECT_EQ(complete + counters, runs[0].result.tasks);
  EXPECT_EQ(highest_iteration, 11);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace stratasim
