#include "strategies/planners/merak.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "core/error.h"
#include "core/hardware.h"
#include "strategies/test_scenario.h"

namespace stratasim::planners {
namespace {

TEST(StageAwareRecompute, RatiosByHand) {
  // S = 4, r0 = 0.7: 1 - 0.3 x 3 / (3 - i) = 0.7, 0.55, 0.1 and none on the last stage.
  const std::vector<double> r = StageAwareRecomputeRatios(0.7, 4);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_NEAR(r[0], 0.7, 1e-12);
  EXPECT_NEAR(r[1], 0.55, 1e-12);
  EXPECT_NEAR(r[2], 0.1, 1e-12);
  EXPECT_EQ(r[3], 0);
  // S = 4, r0 = 0.5: 0.5, 0.25, 1 - 1.5 < 0 clipped to 0, 0.
  EXPECT_EQ(StageAwareRecomputeRatios(0.5, 4), (std::vector<double>{0.5, 0.25, 0, 0}));
  // r0 = 1: every stage but the last recomputes everything; r0 = 0: none does.
  EXPECT_EQ(StageAwareRecomputeRatios(1, 3), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(StageAwareRecomputeRatios(0, 3), (std::vector<double>{0, 0, 0}));
  // Two stages: stage 0 keeps r0. One stage is the last: it never recomputes (as Merak).
  EXPECT_EQ(StageAwareRecomputeRatios(0.6, 2), (std::vector<double>{0.6, 0}));
  EXPECT_EQ(StageAwareRecomputeRatios(0.6, 1), (std::vector<double>{0}));
}

TEST(StageAwareRecompute, EqualisesTheActivationsHeldInFlight) {
  // (1 - r_i)(S - 1 - i) is the same for every stage whose ratio is not clipped.
  const int S = 8;
  const std::vector<double> r = StageAwareRecomputeRatios(0.9, S);
  for (int i = 0; i + 1 < S; ++i) {
    if (r[i] > 0) {
      EXPECT_NEAR((1 - r[i]) * (S - 1 - i), 0.1 * (S - 1), 1e-12) << i;
    }
  }
}

TEST(StageAwareRecompute, CheckpointsTheFloorOfTheShare) {
  EXPECT_EQ(CheckpointedLayers(0.7, 6), 4);   // 4.2
  EXPECT_EQ(CheckpointedLayers(0.55, 6), 3);  // 3.3
  EXPECT_EQ(CheckpointedLayers(0.1, 6), 0);   // 0.6
  EXPECT_EQ(CheckpointedLayers(1, 6), 6);
  EXPECT_EQ(CheckpointedLayers(0, 6), 0);
  // 1 - 0.75 x 3 / 3 = 0.25 computed in floating point: 0.25 x 4 is one layer.
  EXPECT_EQ(CheckpointedLayers(StageAwareRecomputeRatios(0.25, 4)[0], 4), 1);
}

// An embedding, `layers` transformer layers as attention and MLP blocks, and a head, on
// `stages` x `tensor` GPUs of `memory` bytes each.
PlannerInput Input(int layers, int stages, int micro_batches, double memory = 80e9,
                   int tensor = 1) {
  PlannerInput in;
  in.stages = stages;
  in.tensor = tensor;
  in.micro_batches = micro_batches;
  in.profile.kinds = {"A100"};
  std::vector<BlockCost> costs;
  BlockCost embedding{"embedding", 0.1, 0.2, 0, 1e6, 1e6, 50e6, 1e6, false};
  costs.push_back(embedding);
  for (int l = 0; l < layers; ++l) {
    const std::string name = "layer" + std::to_string(l);
    costs.push_back({name + ".attn", 1, 2, 1, 4e9, 0.5e9, 16e6, 1e6, true});
    costs.push_back({name + ".mlp", 2, 4, 2, 4e9, 0.5e9, 32e6, 1e6, true});
  }
  costs.push_back({"head", 0.1, 0.2, 0, 1e6, 1e6, 50e6, 1e6, false});
  in.profile.costs = {costs};
  for (int r = 0; r < stages * tensor; ++r) {
    ClusterView::Device d;
    d.memory_bytes = memory;
    in.cluster.devices.push_back(d);
  }
  in.cluster.intra_Bps = {300e9};
  return in;
}

TEST(MerakPlanner, UniformGivesEachStageItsShareOfTheTransformerBlocks) {
  const PlannerInput in = Input(6, 4, 8);  // 12 blocks between the embedding and the head
  EXPECT_EQ(MerakPartition(in.profile, 4, "uniform"), (std::vector<int>{0, 4, 7, 10, 14}));
  const PlannerInput odd = Input(7, 4, 8);  // 14 blocks: 4, 4, 3, 3
  EXPECT_EQ(PartitionText(MerakPartition(odd.profile, 4, "uniform")), "5,4,3,4");
}

TEST(MerakPlanner, RefusesMoreStagesThanBlocks) {
  const PlannerInput in = Input(1, 4, 8);  // 4 blocks
  try {
    MerakPartition(in.profile, 5, "uniform");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cannot split 4 blocks into 5 pipeline stages");
  }
  EXPECT_EQ(MerakPartition(in.profile, 4, "uniform"), (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(MerakPlanner, ParamsBalancesTheParametersOfTheStages) {
  PlannerInput in = Input(6, 2, 4);
  in.profile.costs[0][0].params = 200e6;  // a heavy embedding: stage 0 takes fewer blocks
  const std::vector<int> b = MerakPartition(in.profile, 2, "params");
  double stage0 = 0, stage1 = 0;
  for (int i = b[0]; i < b[1]; ++i) stage0 += in.profile.costs[0][i].params;
  for (int i = b[1]; i < b[2]; ++i) stage1 += in.profile.costs[0][i].params;
  EXPECT_LT(b[1] - 1, 6);  // fewer than half of the 12 transformer blocks
  EXPECT_LT(std::max(stage0, stage1), 1.2 * std::min(stage0, stage1));
}

TEST(MerakPlanner, StageAwareRecomputationCheckpointsEachStagesFirstBlocks) {
  const PlannerInput in = Input(6, 4, 8);
  const std::vector<int> bounds{0, 4, 7, 10, 14};
  // r = 0.7, 0.55, 0.1, 0: floor of 3, 3, 3 transformer blocks -> 2, 1, 0, 0.
  const std::vector<bool> r =
      StageAwareRecompute(in.profile, bounds, StageAwareRecomputeRatios(0.7, 4));
  std::string marks;
  for (bool x : r) marks += x ? 'R' : '.';
  EXPECT_EQ(marks, ".RR.R.........");
}

TEST(MerakPlanner, ChoosesTheSmallestRatioThatFits) {
  // Each transformer block keeps 4 GB without recomputation: 3 blocks x 4 micro-batches on
  // stage 0 cannot fit in 40 GB, so it must recompute; the planner picks the least that fits.
  const PlannerInput in = Input(6, 4, 8, 40e9);
  MerakSettings settings;
  settings.schedule = "1f1b";
  const PlannedPipeline plan = PlanMerakPipeline(in, settings);
  EXPECT_EQ(plan.schedule, "1f1b");
  EXPECT_EQ(plan.bounds, (std::vector<int>{0, 4, 7, 10, 14}));
  ASSERT_EQ(plan.recompute.size(), 14u);
  for (int st = 0; st < 4; ++st) {
    EXPECT_LE(StageMemoryBytes(in.profile, 0, plan.bounds[st], plan.bounds[st + 1], 4 - st,
                               plan.recompute),
              40e9)
        << st;
  }
  // One step less on the grid does not fit.
  ASSERT_EQ(plan.notes.size(), 2u);
  EXPECT_NE(plan.notes[1].find("(smallest that fits)"), std::string::npos) << plan.notes[1];
  const std::string prefix = "merak: stage-aware recomputation r0 = ";
  const double r0 = std::stod(plan.notes[1].substr(prefix.size(), 4));
  EXPECT_GT(r0, 0);
  MerakSettings less = settings;
  less.recompute_ratio = r0 - 0.05;
  const PlannedPipeline tighter = PlanMerakPipeline(in, less);
  bool overflows = false;
  for (int st = 0; st < 4; ++st) {
    overflows =
        overflows || StageMemoryBytes(in.profile, 0, tighter.bounds[st], tighter.bounds[st + 1],
                                      4 - st, tighter.recompute) > 40e9;
  }
  EXPECT_TRUE(overflows);
  EXPECT_NE(tighter.notes[1].find("(does not fit the GPUs' memory)"), std::string::npos);
  // The last stage never recomputes.
  for (int i = plan.bounds[3]; i < plan.bounds[4]; ++i) EXPECT_FALSE(plan.recompute[i]);
}

TEST(MerakPlanner, ShiftedCriticalPathRecomputesStageTwoFromLastAsStageThreeFromLast) {
  const PlannerInput in = Input(6, 4, 8);
  MerakSettings settings;
  settings.recompute_ratio = 0.7;  // ratios 0.7, 0.55, 0.1 -> 0.7, 0.55, 0.55
  settings.tp_subpipeline = 2;
  const PlannedPipeline plan = PlanMerakPipeline(in, settings);
  std::string marks;
  for (bool x : plan.recompute) marks += x ? 'R' : '.';
  EXPECT_EQ(marks, ".RR.R..R......");
  EXPECT_EQ(plan.schedule, "shifted_critical_path");
  EXPECT_EQ(plan.tp_subpipeline, 2);
  EXPECT_EQ(plan.micro_batches, 8);
  EXPECT_EQ(plan.notes[0],
            "merak: partition uniform 4,3,3,4 blocks per stage, schedule shifted_critical_path, "
            "sub-pipelined tensor parallelism level 2");
  ASSERT_EQ(plan.stage_seconds.size(), 4u);
  EXPECT_GT(plan.predicted_seconds,
            8 * *std::max_element(plan.stage_seconds.begin(), plan.stage_seconds.end()));
}

// A GPT of 8 layers x 256 hidden on 8 GPUs of one server, 8 samples of 1.
Scenario Eight() {
  Scenario s = testing::TinyGptScenario({8, 1, 8, 1, 8, 4});
  s.cluster.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  return s;
}

StrategySpec Spec(std::map<std::string, std::string> options) {
  return testing::SpecOf("merak", "merak", options);
}

TEST(PlanMerak, PlansThroughTheRegistryWithItsTechniques) {
  const Plan plan = PlanStrategy(Eight(), Spec({{"stages", "4"}, {"tensor", "2"}}));
  plan.graph.Validate();
  std::string notes;
  for (const std::string& n : plan.notes) notes += n + "\n";
  EXPECT_NE(notes.find("schedule shifted_critical_path, sub-pipelined tensor parallelism level 3"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("(smallest that fits)"), std::string::npos) << notes;
  // The sub-pipeline's all-reduces and recomputations ahead of the gradients are in the graph.
  int halves = 0;
  for (const Task& t : plan.graph.tasks()) {
    if (plan.graph.streams()[t.stream] == "tp_subpipe") ++halves;
  }
  EXPECT_GT(halves, 0);
  // Without tensor parallelism nothing is sub-pipelined.
  const Plan flat = PlanStrategy(Eight(), Spec({{"stages", "4"}, {"schedule", "1f1b"}}));
  for (const std::string& name : flat.graph.streams()) EXPECT_NE(name, "tp_subpipe");
}

TEST(PlanMerak, BadOptionsAreLocatedErrors) {
  const std::string at = "s.yaml:9:5: strategies[0].options.";
  EXPECT_EQ(testing::PlanErrorOf(Eight(), Spec({{"stages", "4"}, {"tp_subpipeline", "1"}})),
            at + "tp_subpipeline = \"1\": needs tensor > 1");
  EXPECT_EQ(testing::PlanErrorOf(Eight(), Spec({{"stages", "4"},
                                                {"tensor", "2"},
                                                {"sequence_parallel", "true"},
                                                {"tp_subpipeline", "2"}})),
            at + "tp_subpipeline = \"2\": does not combine with sequence_parallel");
  EXPECT_EQ(
      testing::PlanErrorOf(
          Eight(), Spec({{"stages", "4"}, {"micro_batches", "3"}, {"schedule", "pre_recompute"}})),
      at + "micro_batches = \"3\": schedule pre_recompute needs micro_batches (3) >= "
           "stages (4), as Merak does");
  EXPECT_EQ(testing::PlanErrorOf(Eight(), Spec({{"stages", "2"}, {"micro_batches", "3"}})),
            at + "micro_batches = \"3\": schedule shifted_critical_path needs micro_batches "
                 "(3) >= 4");
  EXPECT_NE(testing::PlanErrorOf(Eight(), Spec({{"stages", "4"}, {"recompute_ratio", "1.5"}}))
                .find(at + "recompute_ratio = \"1.5\""),
            std::string::npos);
  EXPECT_NE(testing::PlanErrorOf(Eight(), Spec({{"stages", "4"}, {"schedule", "zb"}}))
                .find(at + "schedule = \"zb\""),
            std::string::npos);
  EXPECT_NE(testing::PlanErrorOf(Eight(), Spec({{"stages", "4"}, {"tp_subpipeline", "4"}}))
                .find(at + "tp_subpipeline = \"4\""),
            std::string::npos);
  Scenario two_layers = Eight();
  two_layers.model.layers = 2;  // 6 blocks: embedding, 2 x (attention, MLP), head
  EXPECT_EQ(testing::PlanErrorOf(two_layers, Spec({{"stages", "8"}})),
            at + "stages = \"8\": the model has 6 blocks, fewer than stages (8)");
  // The sub-pipelined default follows sequence parallelism instead of failing.
  EXPECT_EQ(testing::PlanErrorOf(
                Eight(), Spec({{"stages", "4"}, {"tensor", "2"}, {"sequence_parallel", "true"}})),
            "no error");
  EXPECT_EQ(testing::PlanErrorOf(Eight(), Spec({{"stages", "4"},
                                                {"partition", "params"},
                                                {"recompute_ratio", "0.5"},
                                                {"schedule", "last_no_recompute"}})),
            "no error");
}

}  // namespace
}  // namespace stratasim::planners
