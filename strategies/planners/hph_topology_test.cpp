#include "strategies/planners/hph_topology.h"

#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "strategies/planners/hph_test_util.h"

namespace stratasim::planners {
namespace {

using testing::Input;
using testing::Servers;
using testing::TwoKindProfile;

// The servers of stage st's GPUs in `ranks`.
std::set<int> StageServers(const PlannerInput& in, const std::vector<int>& ranks, int st) {
  std::set<int> servers;
  for (int r = 0; r < in.data; ++r) {
    for (int x = 0; x < in.tensor; ++x) {
      servers.insert(in.cluster.devices[ranks[(r * in.stages + st) * in.tensor + x]].server);
    }
  }
  return servers;
}

TEST(HphTopology, DefaultOrderSpreadsEachStageOverBothServers) {
  // Server 0 slow, server 1 fast, 4 GPUs each; 2 stages x 4 replicas.
  const PlannerInput in = Input(TwoKindProfile(8, 2), Servers({1, 0}, {32, 80}, 4), 2, 1, 4, 8);
  const StageLayout l = DefaultLayout(in);
  EXPECT_TRUE(l.default_order);
  EXPECT_EQ(l.ranks, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  // Replicas 0-1 on server 0, 2-3 on server 1: both stages' all-reduces cross servers, and each
  // stage is costed on the slow kind and the smaller memory.
  EXPECT_EQ(StageServers(in, l.ranks, 0), (std::set<int>{0, 1}));
  EXPECT_EQ(l.stage_kind, (std::vector<int>{1, 1}));
  EXPECT_EQ(l.stage_budget, (std::vector<double>{32, 32}));
}

TEST(HphTopology, DesignerPutsEachStagesReplicasOnOneServerOfOneKind) {
  const PlannerInput in = Input(TwoKindProfile(8, 2), Servers({1, 0}, {32, 80}, 4), 2, 1, 4, 8);
  const std::vector<StageLayout> layouts = DesignLayouts(in);
  ASSERT_EQ(layouts.size(), 2u);  // fast kind first, then slow kind first
  // Kind order (0, 1): stage 0 on the fast server 1, stage 1 on the slow server 0.
  EXPECT_EQ(layouts[0].stage_kind, (std::vector<int>{0, 1}));
  EXPECT_EQ(layouts[0].stage_budget, (std::vector<double>{80, 32}));
  // ranks[(replica * 2 + stage)]: replica r's stage 0 on GPU 4 + r, stage 1 on GPU r.
  EXPECT_EQ(layouts[0].ranks, (std::vector<int>{4, 0, 5, 1, 6, 2, 7, 3}));
  EXPECT_EQ(layouts[1].stage_kind, (std::vector<int>{1, 0}));
  EXPECT_EQ(layouts[1].ranks, (std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7}));
  for (const StageLayout& l : layouts) {
    EXPECT_FALSE(l.default_order);
    for (int st = 0; st < 2; ++st) EXPECT_EQ(StageServers(in, l.ranks, st).size(), 1u);
  }
}

TEST(HphTopology, TensorGroupsStayConsecutiveInsideAStage) {
  // 2 stages x tensor 2 x data 2 on one fast and one slow server of 4 GPUs.
  const PlannerInput in = Input(TwoKindProfile(8, 2), Servers({0, 1}, {80, 32}, 4), 2, 2, 2, 8);
  const StageLayout l = DesignLayouts(in).front();
  // Replica 0: stage 0 on GPUs 0,1, stage 1 on 4,5; replica 1: stage 0 on 2,3, stage 1 on 6,7.
  EXPECT_EQ(l.ranks, (std::vector<int>{0, 1, 4, 5, 2, 3, 6, 7}));
  EXPECT_EQ(l.stage_kind, (std::vector<int>{0, 1}));
}

TEST(HphTopology, AStageOverTwoKindsIsCostedOnTheSlowerAndTheSmallerMemory) {
  // 3 stages of 2 GPUs over servers of 3 GPUs: the middle stage straddles the two kinds.
  const PlannerInput in = Input(TwoKindProfile(6, 2), Servers({0, 1}, {80, 32}, 3), 3, 1, 2, 4);
  const StageLayout l = DesignLayouts(in).front();
  EXPECT_EQ(l.stage_kind, (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(l.stage_budget, (std::vector<double>{80, 32, 32}));
}

TEST(HphTopology, DefaultLayoutFollowsTheLoweringsRankOrder) {
  const PlannerInput in = Input(TwoKindProfile(8, 2), Servers({1, 0}, {32, 80}, 4), 2, 1, 4, 8);
  // "tdp": replicas before stages, so stage 0 is GPUs 0-3 (slow), stage 1 GPUs 4-7 (fast).
  const StageLayout l = DefaultLayout(in, "tdp");
  EXPECT_EQ(l.ranks, (std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(l.stage_kind, (std::vector<int>{1, 0}));
  // The designer's slow-first layout is that order; its fast-first one is none.
  const std::vector<StageLayout> designed = DesignLayouts(in);
  EXPECT_EQ(RankOrderOf(in, designed[1].ranks), "tdp");
  EXPECT_EQ(RankOrderOf(in, designed[0].ranks), "");
  EXPECT_EQ(RankOrderOf(in, DefaultLayout(in).ranks), "tpd");
}

TEST(HphTopology, StageKindsTextCollapsesRuns) {
  const CostProfile p = TwoKindProfile(4, 2);
  EXPECT_EQ(StageKindsText(p, {0, 0, 1}), "fast x2, slow x1");
}

TEST(HphTopology, InconsistentInputIsRefusedWithItsReason) {
  PlannerInput in = Input(TwoKindProfile(8, 2), Servers({0, 1}, {80, 32}, 4), 2, 1, 2, 8);
  try {
    DesignLayouts(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "planner input: stages x tensor x data = 4 but the cluster has 8 GPUs");
  }
  in = Input(TwoKindProfile(1, 2), Servers({0, 1}, {80, 32}, 1), 2, 1, 1, 8);
  try {
    DesignLayouts(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "pipeline planner: 1 blocks cannot fill 2 stages");
  }
  in = Input(TwoKindProfile(4, 2), Servers({0, 2}, {80, 32}, 1), 2, 1, 1, 8);
  try {
    DesignLayouts(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "pipeline planner: a device's kind, server or NIC is out of range");
  }
}

}  // namespace
}  // namespace stratasim::planners
