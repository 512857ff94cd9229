#include "strategies/planners/lower_plan.h"

#include <gtest/gtest.h>

#include "strategies/planners/planner_options.h"
#include "strategies/test_scenario.h"

namespace stratasim::planners {
namespace {

Scenario Tiny() {
  Scenario s = testing::TinyGptScenario(testing::TinyGpt{});
  s.cluster.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  return s;
}

PipelineShape Shape(const Scenario& s, std::map<std::string, std::string> options) {
  const StrategySpec spec = testing::SpecOf("p", "autopipe", options);
  OptionReader opt(spec, PlannerOptions());
  PlannerDegrees d;
  PipelineShape o = ReadPlannerShape(s, opt, d);
  opt.Finish();
  return o;
}

// 2 stages x 4 replicas over the 10 blocks of the tiny GPT (embedding, 4 x 2 halves, head).
PlannedPipeline TwoStages() {
  PlannedPipeline plan;
  plan.stages = 2;
  plan.data = 4;
  plan.bounds = {0, 4, 10};
  plan.micro_batches = 2;
  plan.planning_seconds = 0.0015;
  plan.notes = {"why"};
  return plan;
}

int ComputeTasksOn(const Plan& p, int rank, const std::string& part) {
  int n = 0;
  for (const Task& t : p.graph.tasks()) {
    n += t.kind == TaskKind::kCompute && t.rank == rank && t.phase == Phase::kForward &&
         t.name.str().find(part) != std::string::npos;
  }
  return n;
}

TEST(LowerPlannedPipeline, StagesRunTheirBlocks) {
  const Scenario s = Tiny();
  const Plan p = LowerPlannedPipeline(s, Shape(s, {{"stages", "2"}}), TwoStages(), "autopipe");
  // Blocks 0-3: the embedding, layer 0 and layer 1's attention half, on stage 0 (rank 0).
  EXPECT_GT(ComputeTasksOn(p, 0, "layer1.attn/"), 0);
  EXPECT_EQ(ComputeTasksOn(p, 0, "layer1.mlp/"), 0);
  EXPECT_GT(ComputeTasksOn(p, 1, "layer1.mlp/"), 0);
  ASSERT_GE(p.notes.size(), 2u);
  EXPECT_EQ(p.notes[0], "why");
  EXPECT_EQ(p.notes[1], "autopipe partition (sub-layer blocks per stage): 4,6; planned in 1.50 ms");
}

TEST(LowerPlannedPipeline, RecomputedBlocksRerunTheirForward) {
  const Scenario s = Tiny();
  PlannedPipeline plan = TwoStages();
  plan.recompute.assign(10, false);
  plan.recompute[5] = true;
  const Plan p = LowerPlannedPipeline(s, Shape(s, {{"stages", "2"}}), plan, "piper");
  int recomputed = 0;
  for (const Task& t : p.graph.tasks()) recomputed += t.phase == Phase::kRecompute;
  EXPECT_GT(recomputed, 0);
  EXPECT_NE(p.notes[1].find("; 1 blocks fully recomputed"), std::string::npos);
}

TEST(LowerPlannedPipeline, RefusesAnInconsistentPlan) {
  const Scenario s = Tiny();
  const PipelineShape o = Shape(s, {{"stages", "2"}});
  PlannedPipeline plan = TwoStages();
  plan.data = 2;
  EXPECT_THROW(
      {
        try {
          LowerPlannedPipeline(s, o, plan, "dapple");
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(),
                       "dapple: stages (2) x tensor (1) x data (2) must equal the GPU count (8)");
          throw;
        }
      },
      Error);
  plan = TwoStages();
  plan.bounds = {0, 10, 10};
  EXPECT_THROW(
      {
        try {
          LowerPlannedPipeline(s, o, plan, "hph");
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(),
                       "hph: the partition must give each of the 2 stages at least one of the 10 "
                       "blocks, in order");
          throw;
        }
      },
      Error);
  plan = TwoStages();
  plan.recompute = {true};
  EXPECT_THROW(
      {
        try {
          LowerPlannedPipeline(s, o, plan, "hph");
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(),
                       "hph: recomputation is chosen for 1 blocks, not the 10 the model has");
          throw;
        }
      },
      Error);
}

TEST(PlannerOptions, ReadTheSharedDegreesAsThePipelineKindDoes) {
  const Scenario s = Tiny();
  const StrategySpec spec = testing::SpecOf("p", "autopipe", {{"stages", "4"}});
  OptionReader opt(spec, PlannerOptions());
  PlannerDegrees d;
  const PipelineShape o = ReadPlannerShape(s, opt, d);
  EXPECT_EQ(d.stages, 4);
  EXPECT_EQ(d.data, 2);
  EXPECT_EQ(d.micro_batches, 4);  // global batch 8 / (micro-batch 1 x 2 replicas)
  EXPECT_EQ(o.schedule, "1f1b");
  const StrategySpec bad = testing::SpecOf("p", "autopipe", {{"stages", "3"}});
  OptionReader bad_opt(bad, PlannerOptions());
  EXPECT_THROW(
      {
        try {
          ReadPlannerShape(s, bad_opt, d);
        } catch (const ConfigError& e) {
          EXPECT_NE(std::string(e.what()).find("stages (3) must divide the GPU count (8)"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      ConfigError);
}

}  // namespace
}  // namespace stratasim::planners
