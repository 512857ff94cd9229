// The planners' rules taken from Pro-Prophet's public code (king0722/Pro-Prophet,
// load-balancing/search_algorithm.py): the balanced condition, which devices get a copy, and
// the kept prefix.
#include "strategies/moe/pro_prophet.h"

#include <gtest/gtest.h>

#include "strategies/moe/moe_test_util.h"
#include "strategies/moe/prophet.h"

namespace stratasim {
namespace {

constexpr auto Cheap = &testing::UnitMoeCostModel;

// Two devices with two experts each: device loads 80 and 40 (difference 40) of I = 120
// tokens, so alpha x I / D = 60 alpha and alpha x I / E = 30 alpha.
const TokenMatrix kTwoPerDevice = {{30, 10, 10, 10}, {30, 10, 10, 10}};

TEST(ProProphetTest, BalancedConditionIsAlphaTimesTheMeanDeviceLoad) {
  const MoeCostModel m = Cheap();
  // 40 < 1 x 60: balanced (with I / E, 40 >= 30, the search would copy expert 0).
  EXPECT_TRUE(ProProphetSearch(kTwoPerDevice, 2, m, 1, true).empty());
  EXPECT_TRUE(ProphetPlan(kTwoPerDevice, 2, m, 1, true).empty());
  // 40 >= 0.5 x 60: not balanced; device 0's heaviest expert is copied.
  const auto pro = ProProphetSearch(kTwoPerDevice, 2, m, 0.5, true);
  ASSERT_EQ(pro.size(), 1u);
  EXPECT_EQ(pro[0].expert, 0);
  EXPECT_EQ(pro[0].holders, std::vector<int>{1});
  const auto prophet = ProphetPlan(kTwoPerDevice, 2, m, 0.5, true);
  ASSERT_FALSE(prophet.empty());
  EXPECT_EQ(prophet[0].expert, 0);
}

TEST(ProProphetTest, WithAZeroCountOnEveryDeviceTheSourceWithFewestTokensIsLeftOut) {
  const MoeCostModel m = Cheap();
  // Expert x on device x. Every device receives a zero count for its expert (column), so
  // C = min(1, 1) = 1: of the other devices, device 2 (50 tokens for expert 0) keeps sending
  // them to the owner, devices 1 and 3 get copies.
  const TokenMatrix zeros = {{0, 10, 10, 0}, {700, 0, 10, 10}, {50, 10, 0, 10}, {300, 10, 10, 10}};
  const auto reps = ProProphetSearch(zeros, 1, m, 3, true);
  ASSERT_EQ(reps.size(), 1u);
  EXPECT_EQ(reps[0].expert, 0);
  EXPECT_EQ(reps[0].owner, 0);
  EXPECT_EQ(reps[0].holders, (std::vector<int>{1, 3}));
  // Device 2 now receives no zero count: C = 0, every other device gets a copy (even device 2,
  // whose 50 tokens a cost-chosen holder set would also take).
  TokenMatrix none = zeros;
  none[2][2] = 5;
  const auto all = ProProphetSearch(none, 1, m, 3, true);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].holders, (std::vector<int>{1, 2, 3}));
  // The device left out is the one with the fewest tokens, not the lowest or highest rank.
  TokenMatrix moved = zeros;
  moved[2][0] = 700;
  moved[1][0] = 50;
  const auto other = ProProphetSearch(moved, 1, m, 3, true);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].holders, (std::vector<int>{2, 3}));
}

TEST(ProProphetTest, KeepsAsManyRoundsAsLoweredTheModelledTime) {
  const MoeCostModel m = Cheap();
  // Unscheduled T = 4 T_A2A + 3 T_FEC + 2 T_Trans, in us: with owners only 4 x 410 + 3 x 910
  // = 4370. Round 1 copies expert 0 (510 tokens) onto device 1, which sends only 10 of them:
  // 4 x 400 + 3 x 900 + 2 x 100 = 4500, no better. Round 2 copies expert 1 (400 tokens, all
  // from device 1): 4 x 20 + 3 x 500 + 2 x 200 = 1980, better. One round lowered the best time,
  // so the code's seq[:cntt] keeps the first round only (the best prefix would keep both).
  const TokenMatrix late = {{500, 0, 10, 10}, {10, 400, 10, 10}};
  const auto reps = ProProphetSearch(late, 2, m, 1, false);
  ASSERT_EQ(reps.size(), 1u);
  EXPECT_EQ(reps[0].expert, 0);
  EXPECT_EQ(reps[0].holders, std::vector<int>{1});
  // The modelled times the comment states.
  const auto t = [&](const std::vector<Replica>& r) {
    return ProProphetLayerSeconds(ReplicatedPlacement(late, 2, r, false), 2, m, false);
  };
  EXPECT_NEAR(t({}), 4370e-6, 1e-12);
  EXPECT_NEAR(t({Replica{0, 0, {1}}}), 4500e-6, 1e-12);
  EXPECT_NEAR(t({Replica{0, 0, {1}}, Replica{1, 0, {1}}}), 1980e-6, 1e-12);
}

}  // namespace
}  // namespace stratasim
