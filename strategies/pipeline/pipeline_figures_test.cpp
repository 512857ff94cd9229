#include "strategies/pipeline/pipeline_figures.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "strategies/pipeline/pipeline.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

Scenario Small(int gpus, int layers, int global_batch) {
  return testing::TinyGptScenario({gpus, 1, global_batch, 1, layers, 4});
}

StrategySpec Spec(const std::string& kind, std::map<std::string, std::string> options) {
  return testing::SpecOf("pp", kind, options);
}

// The text reads back as the option `partition` that made it: embedding and head uncounted.
TEST(PipelineFigures, ManualPartitionTextIsTheOptionsCounts) {
  const Plan plan =
      PlanPipeline(Small(2, 4, 4), Spec("pipeline", {{"stages", "2"}, {"partition", "1,3"}}));
  ASSERT_TRUE(plan.pipeline);
  EXPECT_EQ(plan.pipeline->partition, "1,3");
  EXPECT_EQ(plan.pipeline->partition_unit, "layers");
  EXPECT_EQ(plan.pipeline->stages, 2);
  EXPECT_EQ(plan.pipeline->planner, "manual");
  EXPECT_EQ(plan.pipeline->planning_s, 0);
  EXPECT_TRUE(plan.pipeline->predicted_stage_s.empty());
  EXPECT_EQ(plan.pipeline->predicted_iteration_s, 0);
}

TEST(PipelineFigures, EvenSplitCountsEveryLayerOnce) {
  const Plan plan = PlanPipeline(Small(4, 8, 4), Spec("pipeline", {{"stages", "4"}}));
  ASSERT_TRUE(plan.pipeline);
  int sum = 0;
  for (char c : plan.pipeline->partition) sum += c == ',' ? 0 : c - '0';
  EXPECT_EQ(sum, 8) << plan.pipeline->partition;
  EXPECT_EQ(std::count(plan.pipeline->partition.begin(), plan.pipeline->partition.end(), ','), 3);
}

// Interleaved: stage s holds chunks s, s + p, ...: "chunk s + chunk s + p" per stage.
TEST(PipelineFigures, InterleavedListsEachStagesChunksInOrder) {
  const Plan plan = PlanPipeline(
      Small(2, 8, 4),
      Spec("pipeline", {{"stages", "2"}, {"schedule", "interleaved"}, {"partition", "1,2,3,2"}}));
  ASSERT_TRUE(plan.pipeline);
  EXPECT_EQ(plan.pipeline->partition, "1+3,2+2");
  EXPECT_EQ(plan.pipeline->stages, 2);
}

TEST(PipelineFigures, ThreeDHasThem) {
  const Plan plan =
      PlanPipeline(Small(8, 4, 8), Spec("3d", {{"tensor", "2"}, {"stages", "2"}, {"data", "2"}}));
  ASSERT_TRUE(plan.pipeline);
  EXPECT_EQ(plan.pipeline->partition, "2,2");
}

TEST(PipelineFigures, BoundsThatDoNotFitTheStagesAreAnError) {
  const Workload w = BuildWorkload(Small(2, 4, 4).model, 1, DType::kBF16);
  const int n = static_cast<int>(w.layers.size());
  try {
    StagePartitionText(w, {0, 2, 4, n}, 2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "pipeline figures: 3 chunk(s) of " + std::to_string(n) +
                                         " layers do not fit 2 stage(s)");
  }
}

}  // namespace
}  // namespace stratasim
