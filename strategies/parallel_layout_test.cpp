#include "strategies/parallel_layout.h"

#include <gtest/gtest.h>

#include <set>

namespace stratasim {
namespace {

TEST(ParallelLayout, DefaultOrderPutsTensorGroupsOnConsecutiveRanks) {
  const ParallelLayout l{2, 4, 2, "tpd"};
  EXPECT_EQ(l.TensorGroup(0, 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(l.TensorGroup(0, 1), (std::vector<int>{2, 3}));  // next stage, same replica
  EXPECT_EQ(l.TensorGroup(1, 0), (std::vector<int>{8, 9}));  // next replica after 4 stages
  EXPECT_EQ(l.DataGroup(3, 1), (std::vector<int>{7, 15}));
}

TEST(ParallelLayout, OtherOrdersStrideTheTensorGroup) {
  const ParallelLayout l{2, 4, 2, "ptd"};
  EXPECT_EQ(l.TensorGroup(0, 0), (std::vector<int>{0, 4}));
  EXPECT_EQ(l.Rank(0, 3, 0), 3);
  EXPECT_EQ(l.DataGroup(0, 0), (std::vector<int>{0, 8}));
  const ParallelLayout dtp{2, 4, 2, "dtp"};
  EXPECT_EQ(dtp.DataGroup(0, 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(dtp.Rank(0, 1, 0), 4);
}

TEST(ParallelLayout, EveryOrderIsABijection) {
  for (const std::string& order : ParallelLayout::Orders()) {
    const ParallelLayout l{2, 3, 4, order};
    std::set<int> seen;
    for (int q = 0; q < 4; ++q) {
      for (int s = 0; s < 3; ++s) {
        for (int j = 0; j < 2; ++j) seen.insert(l.Rank(q, s, j));
      }
    }
    EXPECT_EQ(seen.size(), 24u) << order;
    EXPECT_EQ(*seen.begin(), 0) << order;
    EXPECT_EQ(*seen.rbegin(), 23) << order;
  }
}

TEST(ParallelLayout, ContextIndexVariesRightAfterTheTensorIndex) {
  // t = 2, c = 2, p = 2, d = 2 in order tpd: ranks run t, then c, then p, then d.
  const ParallelLayout l{2, 2, 2, "tpd", 2};
  EXPECT_EQ(l.TensorGroup(0, 0, 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(l.TensorGroup(0, 0, 1), (std::vector<int>{2, 3}));
  EXPECT_EQ(l.TensorGroup(0, 1, 0), (std::vector<int>{4, 5}));
  EXPECT_EQ(l.Rank(1, 0, 1, 1), 11);
  EXPECT_EQ(l.DataGroup(1, 1), (std::vector<int>{5, 13}));
  // Gradients are reduced over data x context, in rank order (Megatron-Core's DP x CP group).
  EXPECT_EQ(l.GradientGroup(1, 1), (std::vector<int>{5, 7, 13, 15}));
  const ParallelLayout dtp{2, 2, 2, "dtp", 2};
  EXPECT_EQ(dtp.TensorGroup(0, 0, 1), (std::vector<int>{4, 6}));
  EXPECT_EQ(dtp.GradientGroup(0, 0), (std::vector<int>{0, 1, 4, 5}));
}

TEST(ParallelLayout, WithoutContextTheGradientGroupIsTheDataGroup) {
  for (const std::string& order : ParallelLayout::Orders()) {
    const ParallelLayout l{2, 3, 4, order};
    for (int s = 0; s < 3; ++s) {
      for (int j = 0; j < 2; ++j) EXPECT_EQ(l.GradientGroup(s, j), l.DataGroup(s, j)) << order;
    }
  }
}

TEST(ParallelLayout, EveryOrderWithContextIsABijection) {
  for (const std::string& order : ParallelLayout::Orders()) {
    const ParallelLayout l{2, 3, 2, order, 2};
    std::set<int> seen;
    for (int q = 0; q < 2; ++q) {
      for (int s = 0; s < 3; ++s) {
        for (int j = 0; j < 2; ++j) {
          for (int k = 0; k < 2; ++k) seen.insert(l.Rank(q, s, j, k));
        }
      }
    }
    EXPECT_EQ(seen.size(), 24u) << order;
    EXPECT_EQ(*seen.rbegin(), 23) << order;
  }
}

}  // namespace
}  // namespace stratasim
