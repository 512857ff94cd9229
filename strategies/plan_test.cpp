#include "strategies/plan.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace stratasim
