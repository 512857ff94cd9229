// AutoPipe and AutoPipe-H planned from scenarios and simulated: AutoPipe's sub-layer partition
// beats Megatron-LM's equal layer split when the embedding and head make the first and last
// stages heavier; a plan never needs more memory than the GPUs have; AutoPipe-H's mapping lightens
// the NICs that the rank order shares on mixed commodity servers; every bad option is a located
// error.
#include "strategies/planners/autopipe.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cli/run_scenario.h"
#include "core/error.h"
#include "core/scenario.h"
#include "sim/executor.h"
#include "strategies/plan.h"
#include "strategies/planners/autopipe_h.h"
#include "strategies/planners/autopipe_sim.h"
#include "strategies/planners/profile.h"
#include "tests/scenario_text.h"
#include "tests/simulated_strategy.h"

namespace stratasim {
namespace {

// A GPT whose 50k-token head weighs about two layers: Megatron's 2,2,2,2 layers per stage
// leaves the last stage (two layers and the head) the slowest.
std::string Gpt(const std::string& strategies) {
  return "name: autopipe\n" + testing::TwoA100Servers(1) +
         R"(model: {kind: gpt, layers: 8, hidden: 2048, heads: 16, sequence: 1024, vocabulary: 50304}
training:
  global_batch: 16
  micro_batch: 2
  precision: bf16
  iterations: {warmup: 1, measured: 1}
strategies:
)" + strategies;
}

TEST(AutoPipeSimulated, SubLayerPartitionBeatsMegatronsEqualLayerSplit) {
  const Scenario s = LoadScenarioText(
      Gpt("  - {name: megatron, kind: pipeline, options: {stages: 4, schedule: 1f1b, "
          "partition: \"2,2,2,2\"}}\n"
          "  - {name: autopipe, kind: autopipe, options: {stages: 4, slicer: false}}\n"),
      "t.yaml");
  const testing::SimulatedStrategy megatron = testing::Simulated(s, "megatron");
  const testing::SimulatedStrategy autopipe = testing::Simulated(s, "autopipe");
  EXPECT_LT(autopipe.metrics.iteration_time_s, megatron.metrics.iteration_time_s);
  std::string notes;
  for (const std::string& n : autopipe.plan.notes) notes += n + "\n";
  EXPECT_NE(notes.find("autopipe: dynamic program's seed"), std::string::npos) << notes;
  EXPECT_NE(
      notes.find("autopipe partition (sub-layer blocks per stage, embedding and head included): "),
      std::string::npos);
  RecordProperty("megatron_s", std::to_string(megatron.metrics.iteration_time_s));
  RecordProperty("autopipe_s", std::to_string(autopipe.metrics.iteration_time_s));
}

// The slicer at the planner's level: with half-size costs from the profile, it halves some of the
// first micro-batches and the planner's own simulated 1F1B starts up sooner and ends sooner
// (TheSlicerCutsTheMeasuredStartup checks the simulator agrees).
TEST(AutoPipePlanned, TheSlicerCutsThePredictedStartup) {
  const Scenario s = LoadScenarioText(
      Gpt("  - {name: autopipe, kind: autopipe, options: {stages: 4}}\n"), "t.yaml");
  planners::PlannerDegrees d;
  d.stages = 4;
  d.data = 2;
  d.micro_batches = 4;
  const planners::PlannerInput in = planners::BuildPlannerInput(s, d);
  planners::AutoPipeSettings settings;
  settings.half_profile =
      planners::ProfileBlocks(s, planners::PlannerBlocks(s, 1, false, 1), 1, false);
  const planners::PlannedPipeline p = planners::PlanAutoPipe(in, settings);
  ASSERT_FALSE(p.micro_batch_sizes.empty());
  const int sliced = static_cast<int>(p.micro_batch_sizes.size()) - 4;
  EXPECT_EQ(p.micro_batch_sizes[0], 1);

  const planners::StagePlacement place = planners::PlacementOf(in, planners::DefaultRanks(in));
  planners::StageTimes t = planners::EvaluatePartition(in.profile, place, p.bounds, 4, true).times;
  const planners::StageTimes half = planners::TimesOf(settings.half_profile, place, p.bounds, {});
  t.half_forward = half.forward;
  t.half_backward = half.backward;
  t.half_send = half.send;
  std::vector<bool> halved(4 + sliced, false);
  std::fill(halved.begin(), halved.begin() + 2 * sliced, true);
  const planners::Simulated1F1B whole = planners::Simulate1F1B(t, 4);
  const planners::Simulated1F1B cut = planners::Simulate1F1B(t, halved);
  EXPECT_LT(cut.startup, 0.75 * whole.startup);
  EXPECT_LT(cut.iteration, whole.iteration);
  EXPECT_DOUBLE_EQ(cut.iteration, p.predicted_seconds);
  RecordProperty("sliced", sliced);
  RecordProperty("startup_ms",
                 std::to_string(whole.startup * 1e3) + " -> " + std::to_string(cut.startup * 1e3));
  RecordProperty("iteration_ms", std::to_string(whole.iteration * 1e3) + " -> " +
                                     std::to_string(cut.iteration * 1e3));
}

TEST(AutoPipeSimulated, ThePlanFitsInTheGpusMemory) {
  const Scenario s = LoadScenarioText(
      Gpt("  - {name: autopipe, kind: autopipe, options: {stages: 4, slicer: false}}\n"), "t.yaml");
  const testing::SimulatedStrategy a = testing::Simulated(s, "autopipe");
  ASSERT_EQ(a.metrics.peak_memory_bytes.size(), 8u);
  for (size_t r = 0; r < 8; ++r) {
    EXPECT_LE(a.metrics.peak_memory_bytes[r], a.metrics.memory_capacity_bytes[r]);
  }
}

// Two RTX 3090 boxes and two RTX 2080 Ti boxes on PCIe 3.0 with one 100 Gb/s NIC each, 4
// stages x 4 replicas: the rank order gives each replica a server, so every stage's all-reduce
// crosses all four NICs, and every stage has a slow replica.
std::string Commodity(const std::string& strategies) {
  const std::string box = R"(
      gpus_per_server: 4
      pcie: {gpus_per_switch: 2, sockets: 2, bandwidth: "15.75GB/s", latency: "1us",
             socket_link: {bandwidth: "20.8GB/s", latency: "1us"}}
      nics: {count: 1, bandwidth: "100Gb/s", latency: "2us"})";
  return R"(name: hetero
cluster:
  servers:
    - name: rtx3090-box
      count: 2
      gpu: RTX3090)" +
         box + R"(
    - name: rtx2080ti-box
      count: 2
      gpu: RTX2080Ti)" +
         box + R"(
  network: {kind: single_switch, latency: "1us"}
model: {preset: gpt2-large}
training:
  global_batch: 64
  micro_batch: 2
  precision: fp16
  iterations: {warmup: 1, measured: 1}
strategies:
)" + strategies;
}

TEST(AutoPipeHPlanned, ContentionAwareMappingBeatsTheNicSharingRankOrder) {
  const Scenario s = LoadScenarioText(
      Commodity("  - {name: h, kind: autopipe-h, options: {stages: 4, mapping: naive}}\n"),
      "t.yaml");
  planners::PlannerDegrees d;
  d.stages = 4;
  d.data = 4;
  d.micro_batches = 8;
  const planners::PlannerInput in = planners::BuildPlannerInput(s, d);
  planners::AutoPipeHSettings settings;
  settings.autopipe.slicer = false;
  const planners::PlannedPipeline p = planners::PlanAutoPipeH(in, settings);
  const planners::MappingScore naive =
      planners::ScoreMapping(in, planners::NaiveRanks(in), settings);
  ASSERT_FALSE(p.ranks.empty());
  const planners::MappingScore chosen = planners::ScoreMapping(in, p.ranks, settings);
  EXPECT_EQ(naive.busiest.link.substr(0, 4), "NIC ");
  EXPECT_LT(chosen.busiest.seconds, naive.busiest.seconds);
  EXPECT_LT(chosen.Total(), naive.Total());
  RecordProperty("naive_link_s", std::to_string(naive.busiest.seconds));
  RecordProperty("chosen_link_s", std::to_string(chosen.busiest.seconds));
  RecordProperty("naive_total_s", std::to_string(naive.Total()));
  RecordProperty("chosen_total_s", std::to_string(chosen.Total()));
  RecordProperty("mapping", p.notes.at(0));
  RecordProperty("planning_s", std::to_string(p.planning_seconds));
}

TEST(AutoPipeHSimulated, TheContentionAwareMappingBeatsTheRankOrderInTheSimulator) {
  const Scenario s = LoadScenarioText(
      Commodity("  - {name: naive, kind: autopipe-h, options: {stages: 4, mapping: naive, "
                "slicer: false}}\n"
                "  - {name: mapped, kind: autopipe-h, options: {stages: 4, slicer: false}}\n"),
      "t.yaml");
  const testing::SimulatedStrategy naive = testing::Simulated(s, "naive");
  const testing::SimulatedStrategy mapped = testing::Simulated(s, "mapped");
  // Measured with contention on every link: 960 ms against 810 ms when written.
  EXPECT_LT(mapped.metrics.iteration_time_s * 1.1, naive.metrics.iteration_time_s)
      << mapped.metrics.iteration_time_s << " vs " << naive.metrics.iteration_time_s;
  RecordProperty("naive_s", std::to_string(naive.metrics.iteration_time_s));
  RecordProperty("mapped_s", std::to_string(mapped.metrics.iteration_time_s));
}

TEST(AutoPipeSimulated, TheSlicerCutsTheMeasuredStartup) {
  const Scenario s = LoadScenarioText(
      Gpt("  - {name: whole, kind: autopipe, options: {stages: 4, slicer: false}}\n"
          "  - {name: sliced, kind: autopipe, options: {stages: 4}}\n"),
      "t.yaml");
  const testing::SimulatedStrategy whole = testing::Simulated(s, "whole");
  const testing::SimulatedStrategy sliced = testing::Simulated(s, "sliced");
  ASSERT_GT(whole.metrics.startup_s, 0);
  // The first micro-batches at half size reach the last stage in about half the time.
  EXPECT_LT(sliced.metrics.startup_s, 0.75 * whole.metrics.startup_s)
      << sliced.metrics.startup_s << " vs " << whole.metrics.startup_s;
  EXPECT_LE(sliced.metrics.iteration_time_s, whole.metrics.iteration_time_s);
  RecordProperty("whole_startup_s", std::to_string(whole.metrics.startup_s));
  RecordProperty("sliced_startup_s", std::to_string(sliced.metrics.startup_s));
}

std::string ErrorOf(const std::string& kind, const std::string& options) {
  try {
    const Scenario s = LoadScenarioText(
        Gpt("  - {name: x, kind: " + kind + ", options: {stages: 4, " + options + "}}\n"),
        "t.yaml");
    PlanStrategy(s, s.strategies.at(0));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(AutoPipeOptions, BadOptionsAreLocatedErrors) {
  EXPECT_EQ(ErrorOf("autopipe", "slicer: maybe"),
            "t.yaml:18:60: strategies[0].options.slicer = \"maybe\": must be true or false");
  EXPECT_EQ(ErrorOf("autopipe", "max_sliced: -1"),
            "t.yaml:18:64: strategies[0].options.max_sliced = \"-1\": must be an integer in [0, "
            "1048576]");
  EXPECT_EQ(ErrorOf("autopipe", "recompute: 3"),
            "t.yaml:18:63: strategies[0].options.recompute = \"3\": must be true or false");
  EXPECT_EQ(
      ErrorOf("autopipe", "max_plans: 0"),
      "t.yaml:18:63: strategies[0].options.max_plans = \"0\": must be an integer in [1, 16777216]");
  EXPECT_EQ(ErrorOf("autopipe", "mapping: naive"),
            "t.yaml:18:61: strategies[0].options.mapping = \"naive\": unknown option (known: "
            "bucket_size, data, dp_overlap, max_plans, max_sliced, micro_batches, rank_order, "
            "recompute, scatter_gather, sequence_parallel, slicer, stages, tensor)");
  EXPECT_EQ(ErrorOf("autopipe-h", "mapping: fastest"),
            "t.yaml:18:63: strategies[0].options.mapping = \"fastest\": must be one of: "
            "contention, naive");
  EXPECT_EQ(
      ErrorOf("autopipe", "slicer: false, max_sliced: 2"),
      "t.yaml:18:79: strategies[0].options.max_sliced = \"2\": applies only with slicer: true");
  EXPECT_EQ(ErrorOf("autopipe-h", "max_sliced: 2.5"),
            "t.yaml:18:66: strategies[0].options.max_sliced = \"2.5\": must be an integer in [0, "
            "1048576]");
}

}  // namespace
}  // namespace stratasim
