#include "strategies/planners/oases_strategy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "strategies/planners/oases_profile.h"
#include "strategies/test_scenario.h"

namespace stratasim::planners {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The tiny GPT (4 layers, 4 heads) on one server of 8 A100s, 8 samples per group at the
// largest degree, 64 per iteration.
Scenario Tiny() {
  testing::TinyGpt t;
  t.micro_batch = 8;
  t.global_batch = 64;
  Scenario s = testing::TinyGptScenario(t);
  s.cluster.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  return s;
}

TEST(OasesStrategy, ChoosesTheBestLargestDegreeByPredictedIteration) {
  const Scenario s = Tiny();
  const OasesChoice c = ChooseOasesDegrees(s, /*recompute=*/true);
  ASSERT_EQ(c.shape.sublayer_tensor.size(), 8u);
  EXPECT_TRUE(c.shape.recompute);
  // The largest degree the plan uses is the one it was sized for.
  EXPECT_EQ(*std::max_element(c.shape.sublayer_tensor.begin(), c.shape.sublayer_tensor.end()),
            c.largest);
  // 64 samples, 8 per group at T over 8 / T replicas.
  EXPECT_EQ(c.micro_batches, 64 / (8 * (8 / c.largest)));
  EXPECT_DOUBLE_EQ(c.predicted_iteration_s, c.plan.objective_s * c.micro_batches);
  EXPECT_EQ(c.problems, 3);  // T = 1, 2, 4
  // No other largest degree predicts less: solve each alone and compare.
  for (int T : {1, 2, 4}) {
    OasesProfileRequest r;
    r.gpus = 8;
    for (int t : {1, 2, 4}) {
      if (t <= T && 8 * t / T >= 2) r.degrees.push_back(t), r.group_samples.push_back(8 * t / T);
    }
    const OasesPlan alone = PlanOases(BuildOasesProfile(s, r), OasesMemoryLimitBytes(s, 8), T);
    EXPECT_LE(c.predicted_iteration_s, alone.objective_s * (64 / (8 * (8 / T))) * (1 + 1e-12));
  }
  EXPECT_THAT(c.notes.at(0), StartsWith("Oases ILP (GLPK"));
  EXPECT_THAT(c.notes.at(1), HasSubstr("micro-batches per replica "));
}

TEST(OasesStrategy, NotesAreDeterministic) {
  // The notes go to results files: the same scenario gives the same text (no solve time).
  const Scenario s = Tiny();
  EXPECT_EQ(ChooseOasesDegrees(s, true).notes, ChooseOasesDegrees(s, true).notes);
}

TEST(OasesStrategy, NoFeasiblePlanNamesTheMemoryNeededAndAvailable) {
  Scenario s = Tiny();
  s.cluster.gpu_kinds[0].memory_bytes = 1e6;
  try {
    ChooseOasesDegrees(s, true);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), StartsWith("oases planner: no feasible plan: the least memory any TP "
                                     "degree assignment of 8 sub-layers needs is "));
    EXPECT_THAT(e.what(), HasSubstr(", above the limit of 927.73 KiB (0.95 of the GPU's memory; "
                                    "the least over every largest degree of 1,2,4 on 8 GPUs)"));
  }
}

TEST(OasesStrategy, OddMicroBatchesHaveNoSubBatches) {
  Scenario s = Tiny();
  s.training.micro_batch = 3;
  s.training.global_batch = 24;
  try {
    ChooseOasesDegrees(s, true);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), StartsWith("oases planner: no largest tensor degree applies on 8 GPUs: "
                                     "largest degree 1: its groups' 3 samples (micro_batch) do "
                                     "not split into two equal sub-batches"));
  }
}

// Through the `oases` kind (strategies/tensor/oases.cpp): `planner: ilp`.

TEST(OasesStrategy, PlannerIlpLowersTheChosenDegrees) {
  const Scenario s = Tiny();
  const Plan plan = PlanStrategy(s, testing::SpecOf("o", "oases", {{"planner", "ilp"}}));
  ASSERT_TRUE(plan.solver.has_value());
  EXPECT_EQ(plan.solver->planner, "oases ILP");
  EXPECT_EQ(plan.solver->status, "optimal");
  EXPECT_EQ(plan.solver->problems, 3);
  EXPECT_GT(plan.solver->objective_s, 0);
  EXPECT_GT(plan.solver->predicted_iteration_s, 0);
  const OasesChoice c = ChooseOasesDegrees(s, /*recompute=*/false);
  EXPECT_DOUBLE_EQ(plan.solver->objective_s, c.plan.objective_s);
  ASSERT_GE(plan.notes.size(), 2u);
  EXPECT_EQ(plan.notes[0], c.notes[0]);  // the degrees, before the lowering's notes
  EXPECT_FALSE(plan.graph.tasks().empty());
}

TEST(OasesStrategy, PlannerIlpErrorsAreLocated) {
  const Scenario s = Tiny();
  EXPECT_EQ(
      testing::PlanErrorOf(s, testing::SpecOf("o", "oases", {{"planner", "ilp"}, {"tensor", "2"}})),
      "s.yaml:9:5: strategies[0].options.tensor = \"2\": the planner chooses the degrees "
      "(planner: ilp): give tensor, first_tensor and cutpoint only without it");
  Scenario small = s;
  small.cluster.gpu_kinds[0].memory_bytes = 1e6;
  EXPECT_THAT(testing::PlanErrorOf(small, testing::SpecOf("o", "oases", {{"planner", "ilp"}})),
              StartsWith("s.yaml:9:5: strategies[0].options.planner = \"ilp\": oases planner: no "
                         "feasible plan: the least memory any TP degree assignment of 8 "
                         "sub-layers needs is "));
}

}  // namespace
}  // namespace stratasim::planners
