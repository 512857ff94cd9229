#include "strategies/plan.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

TEST(PlanStrategy, UnknownKindNamesTheKnownOnes) {
  Scenario s;
  StrategySpec spec;
  spec.name = "x";
  spec.kind = "zero4";
  spec.key_path = "strategies[1]";
  spec.where = SourceLocation{"s.yaml", 12, 5};
  try {
    PlanStrategy(s, spec);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "strategies[1].kind");
    EXPECT_EQ(e.value(), "zero4");
    EXPECT_EQ(
        e.rule().rfind(
            "unknown strategy kind (known: ddp, zero1, zero2, zero3, tensor, pipeline, 3d", 0),
        0u)
        << e.rule();
    EXPECT_EQ(e.where().line, 12);
  }
}

// A strategy's own training choices reach its planner; the others plan the scenario's.
TEST(PlanStrategy, PlansWithTheStrategysOwnTrainingChoices) {
  testing::TinyGpt tiny;
  tiny.global_batch = 16;  // 2 micro-batches of 1 per GPU
  const Scenario s = testing::TinyGptScenario(tiny);
  StrategySpec mine = testing::SpecOf("fp32", "ddp", {});
  mine.own.precision = DType::kFP32;
  mine.own.micro_batch = 2;
  auto compute_dtypes = [](const Plan& p) {
    std::vector<DType> seen;
    for (const Task& t : p.graph.tasks()) {
      if (t.kind == TaskKind::kCompute && t.phase == Phase::kForward && t.flops > 0 &&
          std::find(seen.begin(), seen.end(), t.dtype) == seen.end()) {
        seen.push_back(t.dtype);
      }
    }
    return seen;
  };
  const Plan own = PlanStrategy(s, mine);
  const Plan plain = PlanStrategy(s, testing::SpecOf("bf16", "ddp", {}));
  EXPECT_EQ(compute_dtypes(own), std::vector<DType>{DType::kFP32});
  EXPECT_EQ(compute_dtypes(plain), std::vector<DType>{DType::kBF16});
  // One micro-batch of 2 per GPU against two of 1: half the forward tasks.
  EXPECT_LT(own.graph.tasks().size(), plain.graph.tasks().size());
  EXPECT_NE(std::find(own.notes.begin(), own.notes.end(),
                      "trained with training.micro_batch = 2 (the scenario's: 1)"),
            own.notes.end());
  EXPECT_NE(std::find(own.notes.begin(), own.notes.end(),
                      "trained with training.precision = fp32 (the scenario's: bf16)"),
            own.notes.end());
}

}  // namespace
}  // namespace stratasim
