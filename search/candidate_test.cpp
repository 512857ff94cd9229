#include "search/candidate.h"

#include <gtest/gtest.h>

namespace stratasim::search {
namespace {

Candidate ThreeD() {
  Candidate c;
  c.data = 24;
  c.tensor = 8;
  c.pipeline = 8;
  c.micro_batch = 1;
  c.micro_batches = 64;
  c.schedule = "interleaved";
  c.virtual_stages = 2;
  c.recompute = Recompute::kFull;
  c.sequence_parallel = true;
  c.zero = Zero::kDistributedOptimizer;
  return c;
}

TEST(CandidateTest, NamesEveryChoiceThatIsOn) {
  EXPECT_EQ(CandidateName(ThreeD()), "d24-t8-p8-mb1-int2-full-sp-do");
  Candidate c;
  c.data = 16;
  EXPECT_EQ(CandidateName(c), "d16-t1-p1-mb1");
  c.zero = Zero::kZero3;
  c.micro_batch = 4;
  EXPECT_EQ(CandidateName(c), "d16-t1-p1-mb4-z3");
  Candidate p = ThreeD();
  p.schedule = "1f1b";
  p.virtual_stages = 1;
  p.recompute = Recompute::kSelective;
  p.sequence_parallel = false;
  p.zero = Zero::kNone;
  p.rank_order = "ptd";
  EXPECT_EQ(CandidateName(p), "d24-t8-p8-mb1-1f1b-selective-ptd");
}

TEST(CandidateTest, ThreeDPlanIsKind3dWithItsOptions) {
  const StrategySpec spec = ToStrategySpec(ThreeD(), "search.plans[0]");
  EXPECT_EQ(spec.kind, "3d");
  EXPECT_EQ(spec.name, "d24-t8-p8-mb1-int2-full-sp-do");
  EXPECT_EQ(spec.options.at("tensor").text, "8");
  EXPECT_EQ(spec.options.at("stages").text, "8");
  EXPECT_EQ(spec.options.at("data").text, "24");
  EXPECT_EQ(spec.options.at("schedule").text, "interleaved");
  EXPECT_EQ(spec.options.at("virtual_stages").text, "2");
  EXPECT_EQ(spec.options.at("sequence_parallel").text, "true");
  EXPECT_EQ(spec.options.at("distributed_optimizer").text, "true");
  EXPECT_EQ(spec.options.at("rank_order").text, "tpd");
  EXPECT_EQ(*spec.own.micro_batch, 1);
  EXPECT_EQ(*spec.own.recompute, Recompute::kFull);
}

TEST(CandidateTest, DataOnlyPlansAreTheZeroKinds) {
  Candidate c;
  c.data = 8;
  EXPECT_EQ(ToStrategySpec(c, "x").kind, "ddp");
  c.zero = Zero::kZero1;
  EXPECT_EQ(ToStrategySpec(c, "x").kind, "zero1");
  c.zero = Zero::kZero2;
  EXPECT_EQ(ToStrategySpec(c, "x").kind, "zero2");
  c.zero = Zero::kZero3;
  EXPECT_EQ(ToStrategySpec(c, "x").kind, "zero3");
  EXPECT_TRUE(ToStrategySpec(c, "x").options.empty());
  EXPECT_EQ(ToString(Zero::kDistributedOptimizer), "distributed_optimizer");
}

}  // namespace
}  // namespace stratasim::search
