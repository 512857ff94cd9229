#include "strategies/planners/hph_partition.h"

#include <gtest/gtest.h>

#include "strategies/planners/hph_test_util.h"

namespace stratasim::planners {
namespace {

using testing::TwoKindProfile;

constexpr double kPlenty = 1e9;

TEST(HphPartition, SpeedWeightedSplitGivesTheFastKindMoreBlocks) {
  // 12 blocks of 3 s on the fast kind, 6 s on the slow one: 8 + 4 balances at 24 s.
  const CostProfile p = TwoKindProfile(12, 2);
  const StagePartition s = PartitionStages(p, {0, 1}, {0, 1}, {kPlenty, kPlenty}, 4, true);
  ASSERT_TRUE(s.fits);
  EXPECT_EQ(s.bounds, (std::vector<int>{0, 8, 12}));
  EXPECT_EQ(s.stage_seconds, (std::vector<double>{24, 24}));
  EXPECT_EQ(s.stage_recomputed, (std::vector<int>{0, 0}));
}

TEST(HphPartition, SpeedBlindSplitIsEvenAndLeavesTheSlowStageSlower) {
  const CostProfile p = TwoKindProfile(12, 2);
  // Balanced as if both stages were the fast kind; timed on their own kinds.
  const StagePartition s = PartitionStages(p, {0, 0}, {0, 1}, {kPlenty, kPlenty}, 4, true);
  ASSERT_TRUE(s.fits);
  EXPECT_EQ(s.bounds, (std::vector<int>{0, 6, 12}));
  EXPECT_EQ(s.stage_seconds, (std::vector<double>{18, 36}));
  EXPECT_DOUBLE_EQ(s.max_seconds, 36);
}

TEST(HphPartition, FewestRecomputedPicksTheBiggestSavingsOnly) {
  CostProfile p = TwoKindProfile(4, 2);
  p.costs[0][2].activation_bytes = 300;  // saves 290 B per micro-batch
  // Blocks 0-3, 2 in flight: 4 x 16 B states + 2 x 600 B = 1264 B.
  EXPECT_EQ(FewestRecomputed(p, 0, 0, 4, 2, 1264), std::vector<int>{});
  // 1000 B: recomputing block 2 gives 64 + 2 x 310 + 300 = 984 B.
  EXPECT_EQ(FewestRecomputed(p, 0, 0, 4, 2, 1000), std::vector<int>{2});
  // 900 B: block 2, then block 0 (first of the equal savings): 64 + 2 x 220 + 300 = 804 B.
  EXPECT_EQ(FewestRecomputed(p, 0, 0, 4, 2, 900), (std::vector<int>{0, 2}));
  // All four recomputed still need 64 + 2 x 40 + 300 = 444 B.
  EXPECT_EQ(FewestRecomputed(p, 0, 0, 4, 2, 400), std::nullopt);
}

TEST(HphPartition, OnlyTheStageThatWouldOverflowRecomputes) {
  // 8 blocks, 4 micro-batches, even speeds. Stage 0 holds 2 micro-batches in flight, stage 1 one.
  const CostProfile p = TwoKindProfile(8, 1);
  // Stage 0 with 4 blocks: 64 + 2 x 400 = 864 B; a 700 B budget needs two blocks recomputed
  // (one: 64 + 2 x 310 + 100 = 784 B; two: 64 + 2 x 220 + 100 = 604 B), 12 + 2 = 14 s. Moving a
  // block to stage 1 instead (3 blocks: 48 + 600 = 648 B) would make stage 1 take 15 s.
  const StagePartition s = PartitionStages(p, {0, 1}, {0, 1}, {700, kPlenty}, 4, true);
  ASSERT_TRUE(s.fits);
  EXPECT_EQ(s.bounds, (std::vector<int>{0, 4, 8}));
  EXPECT_EQ(s.stage_recomputed, (std::vector<int>{2, 0}));
  EXPECT_EQ(s.recompute, (std::vector<bool>{true, true, false, false, false, false, false, false}));
  EXPECT_EQ(s.stage_seconds, (std::vector<double>{14, 12}));
  EXPECT_LE(s.stage_memory[0], 700);
  EXPECT_DOUBLE_EQ(s.stage_memory[1], 64 + 400);
}

TEST(HphPartition, WithoutRecomputationTheOverflowingSplitIsAvoidedOrInfeasible) {
  const CostProfile p = TwoKindProfile(8, 1);
  const StagePartition moved = PartitionStages(p, {0, 1}, {0, 1}, {700, kPlenty}, 4, false);
  ASSERT_TRUE(moved.fits);
  EXPECT_EQ(moved.bounds, (std::vector<int>{0, 3, 8}));
  EXPECT_EQ(moved.stage_recomputed, (std::vector<int>{0, 0}));
  // Not even one block fits in 100 B with 2 in flight.
  EXPECT_FALSE(PartitionStages(p, {0, 1}, {0, 1}, {100, kPlenty}, 4, false).fits);
  EXPECT_FALSE(PartitionStages(p, {0, 1}, {0, 1}, {10, 10}, 4, true).fits);
}

}  // namespace
}  // namespace stratasim::planners
