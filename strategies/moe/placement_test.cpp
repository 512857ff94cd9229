#include "strategies/moe/placement.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim {
namespace {

// 3 ranks, one expert each; expert 0 is hot.
const TokenMatrix kT = {{60, 20, 10}, {50, 20, 20}, {40, 30, 10}};

TEST(PlacementTest, OwnersReceiveTheirExpertsTokens) {
  const LayerDecision d = OwnerPlacement(kT, 1);
  EXPECT_EQ(d.a2a_tokens[0 * 3 + 0], 60);
  EXPECT_EQ(d.a2a_tokens[1 * 3 + 0], 50);
  EXPECT_EQ(d.a2a_tokens[2 * 3 + 1], 30);
  EXPECT_EQ(d.ComputedTokens(), (std::vector<double>{150, 70, 40}));
  EXPECT_EQ(d.load_before, d.load_after);
  EXPECT_EQ(d.dropped_tokens, 0);
}

TEST(PlacementTest, CapacityDropsAndPadding) {
  const LayerDecision dropped = OwnerPlacement(kT, 1, 40);
  EXPECT_EQ(dropped.dropped_tokens, 20 + 10);
  EXPECT_EQ(dropped.ComputedTokens()[0], 120);
  const LayerDecision padded = OwnerPlacement(kT, 1, 40, true);
  EXPECT_EQ(padded.padded_capacity, 40);
  // Every block is sent and computed at capacity.
  EXPECT_EQ(padded.ComputedTokens(), (std::vector<double>{120, 120, 120}));
}

TEST(PlacementTest, TwoExpertsPerRank) {
  const TokenMatrix t = {{1, 2, 3, 4}, {5, 6, 7, 8}};
  const LayerDecision d = OwnerPlacement(t, 2);
  EXPECT_EQ(d.a2a_tokens, (std::vector<double>{3, 7, 11, 15}));
  EXPECT_EQ(d.weight_sets, (std::vector<int>{2, 2}));
}

TEST(PlacementTest, ReplicaHoldersComputeTheirOwnTokens) {
  const LayerDecision d = ReplicatedPlacement(kT, 1, {Replica{0, 0, {1}}}, false);
  // Rank 1 keeps its 50 tokens for expert 0; rank 2 still sends its 40 to the owner.
  EXPECT_EQ(d.replica_tokens, (std::vector<double>{0, 50, 0}));
  EXPECT_EQ(d.a2a_tokens[1 * 3 + 0], 0);
  EXPECT_EQ(d.a2a_tokens[2 * 3 + 0], 40);
  EXPECT_EQ(d.ComputedTokens(), (std::vector<double>{100, 120, 40}));
  EXPECT_EQ(d.load_before, (std::vector<double>{150, 70, 40}));
  EXPECT_EQ(d.weight_sets, (std::vector<int>{1, 2, 1}));
  EXPECT_LT(StdDev(d.load_after), StdDev(d.load_before));
}

TEST(PlacementTest, SpreadSplitsTravellingTokensOverHolders) {
  const LayerDecision d = ReplicatedPlacement(kT, 1, {Replica{0, 0, {2}}}, true);
  // Rank 1 holds no copy: its 50 tokens split 25/25 between owner 0 and holder 2.
  EXPECT_EQ(d.a2a_tokens[1 * 3 + 0], 25);
  EXPECT_EQ(d.a2a_tokens[1 * 3 + 2], 25 + 20);  // and its 20 for expert 2
  EXPECT_EQ(d.replica_tokens[2], 40);
  double total = 0;
  for (double c : d.ComputedTokens()) total += c;
  EXPECT_EQ(total, 260);  // every token computed exactly once
}

TEST(PlacementTest, BadReplicas) {
  EXPECT_THROW(ReplicatedPlacement(kT, 1, {Replica{0, 1, {2}}}, false), Error);
  EXPECT_THROW(ReplicatedPlacement(kT, 1, {Replica{0, 0, {0}}}, false), Error);
  EXPECT_THROW(ReplicatedPlacement(kT, 1, {Replica{0, 0, {5}}}, false), Error);
  EXPECT_THROW(OwnerPlacement({{1, 2}}, 1), Error);
}

}  // namespace
}  // namespace stratasim
