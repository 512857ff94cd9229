#include "sim/collectives/coalesce.h"

#include <gtest/gtest.h>

namespace stratasim::sim {
namespace {

Flow F(int src, int dst, double bytes, std::vector<int> deps = {}, double delay = 0) {
  Flow f;
  f.src = src;
  f.dst = dst;
  f.bytes = bytes;
  f.deps = std::move(deps);
  f.delay_s = delay;
  return f;
}

TEST(Coalesce, MergesIndependentFlowsOnTheSameEdge) {
  FlowProgram p;
  p.flows = {F(0, 1, 10), F(1, 2, 5), F(0, 1, 30), F(0, 1, 7, {}, 1e-6)};
  CoalesceIndependentFlows(&p);
  ASSERT_EQ(p.flows.size(), 3u);
  EXPECT_DOUBLE_EQ(p.flows[0].bytes, 40);  // 10 + 30
  EXPECT_DOUBLE_EQ(p.flows[1].bytes, 5);
  EXPECT_DOUBLE_EQ(p.flows[2].bytes, 7);  // another delay: kept apart
}

TEST(Coalesce, KeepsFlowsOfDifferentLatencyGroupsApart) {
  FlowProgram p;
  p.flows = {F(0, 1, 10), F(0, 1, 20), F(0, 1, 30)};
  p.flows[1].latency_group = 0;
  p.flows[2].latency_group = 1;
  CoalesceIndependentFlows(&p);
  ASSERT_EQ(p.flows.size(), 3u);
  EXPECT_EQ(p.flows[1].latency_group, 0);
  EXPECT_EQ(p.flows[2].latency_group, 1);
}

TEST(Coalesce, KeepsFlowsInDependencyChainsAndRemapsTheirDeps) {
  FlowProgram p;
  // 0 and 2 share an edge but 0 feeds 3; 1 and 4 merge; 3 depends on 0.
  p.flows = {F(0, 1, 1), F(2, 3, 2), F(0, 1, 3), F(1, 2, 4, {0}), F(2, 3, 5)};
  CoalesceIndependentFlows(&p);
  ASSERT_EQ(p.flows.size(), 4u);
  EXPECT_DOUBLE_EQ(p.flows[0].bytes, 1);  // depended on: not merged
  EXPECT_DOUBLE_EQ(p.flows[1].bytes, 7);  // 2 + 5
  EXPECT_DOUBLE_EQ(p.flows[2].bytes, 3);
  EXPECT_EQ(p.flows[3].deps, std::vector<int>{0});
}

TEST(Coalesce, RemapsTheFlowAFlowFollows) {
  FlowProgram p;
  // 0 and 2 merge; on edge 1 -> 2, 3 follows 1 (which keeps index 1) and 4 follows 3 (which
  // moves to index 2).
  p.flows = {F(0, 1, 1), F(1, 2, 2), F(0, 1, 3), F(1, 2, 4, {1}), F(1, 2, 5, {3})};
  p.flows[3].follows = 1;
  p.flows[4].follows = 3;
  CoalesceIndependentFlows(&p);
  ASSERT_EQ(p.flows.size(), 4u);
  EXPECT_DOUBLE_EQ(p.flows[0].bytes, 4);  // 1 + 3
  EXPECT_EQ(p.flows[2].follows, 1);
  EXPECT_EQ(p.flows[3].follows, 2);
  EXPECT_EQ(p.flows[3].deps, std::vector<int>{2});
}

}  // namespace
}  // namespace stratasim::sim
