#include "strategies/parallel_layout.h"

#include <gtest/gtest.h>

#include <set>

#include "core/error.h"

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

TEST(ParallelLayout, ExplicitRanksReplaceTheOrder) {
  // t 2 x p 2 x d 2, positions (replica, stage, tp) in order; stage 1 of replica 0 on 6 and 7.
  ParallelLayout l{2, 2, 2, "tpd"};
  l.ranks = {0, 1, 6, 7, 2, 3, 4, 5};
  l.CheckRanks(8);
  EXPECT_EQ(l.Rank(0, 1, 0), 6);
  EXPECT_EQ(l.TensorGroup(0, 1), (std::vector<int>{6, 7}));
  EXPECT_EQ(l.TensorGroup(1, 0), (std::vector<int>{2, 3}));
  EXPECT_EQ(l.DataGroup(1, 1), (std::vector<int>{7, 5}));  // replica order
  EXPECT_EQ(l.GradientGroup(1, 1), (std::vector<int>{5, 7}));
  // The mapping an order gives, written out, gives the same ranks as the order.
  const ParallelLayout ordered{2, 2, 2, "dpt"};
  ParallelLayout written{2, 2, 2, "tpd"};
  for (int q = 0; q < 2; ++q) {
    for (int s = 0; s < 2; ++s) {
      for (int j = 0; j < 2; ++j) written.ranks.push_back(ordered.Rank(q, s, j));
    }
  }
  written.CheckRanks(8);
  for (int q = 0; q < 2; ++q) {
    for (int s = 0; s < 2; ++s) {
      for (int j = 0; j < 2; ++j) EXPECT_EQ(written.Rank(q, s, j), ordered.Rank(q, s, j));
    }
  }
}

TEST(ParallelLayout, BadExplicitRanksAreErrors) {
  auto message = [](ParallelLayout l, int gpus) -> std::string {
    try {
      l.CheckRanks(gpus);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  ParallelLayout l{2, 2, 1, "tpd"};
  l.ranks = {0, 1, 2};
  EXPECT_EQ(message(l, 4),
            "explicit rank mapping: 3 ranks for tensor (2) x stages (2) x data (1) = 4 positions "
            "on 4 GPUs");
  l.ranks = {0, 1, 2, 3};
  EXPECT_EQ(message(l, 8),
            "explicit rank mapping: 4 ranks for tensor (2) x stages (2) x data (1) = 4 positions "
            "on 8 GPUs");
  l.ranks = {0, 1, 2, 4};
  EXPECT_EQ(message(l, 4), "explicit rank mapping: rank 4 at position 3 is not a GPU (0..3)");
  l.ranks = {0, 1, 1, 3};
  EXPECT_EQ(message(l, 4),
            "explicit rank mapping: rank 1 appears twice (again at position 2): not a permutation "
            "of the GPUs");
  l.ranks = {3, 2, 1, 0};
  EXPECT_EQ(message(l, 4), "no error");
  l.context = 2;
  EXPECT_EQ(message(l, 4), "explicit rank mapping: needs context 1, not 2");
}

}  // namespace
}  // namespace stratasim
