// Each placement policy's mapping on a small cluster, worked out by hand: 4 servers of 4 GPUs,
// 2 servers per leaf (leaf 0: GPUs 0-7, leaf 1: GPUs 8-15); jobs A (2 GPUs, data parallel),
// B (4 GPUs, one tensor group of 4) and C (8 GPUs, tensor 2 x 2 pipeline stages x 2 replicas).
#include "core/placement.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim {
namespace {

ClusterShape Small() {
  ClusterShape c;
  c.servers = 4;
  c.gpus_per_server = 4;
  c.servers_per_leaf = 2;
  return c;
}

std::vector<PlacementJob> Jobs() { return {{"A", 2, 1, 1}, {"B", 4, 4, 1}, {"C", 8, 2, 2}}; }

using Gpus = std::vector<int>;

TEST(Placement, PackedTakesTheFirstFreeGpusJobAfterJob) {
  const Placement p = Place("packed", Small(), Jobs());
  EXPECT_EQ(p[0], (Gpus{0, 1}));
  EXPECT_EQ(p[1], (Gpus{2, 3, 4, 5}));  // straddles servers 0 and 1: packed does not care
  EXPECT_EQ(p[2], (Gpus{6, 7, 8, 9, 10, 11, 12, 13}));
}

TEST(Placement, SpreadGoesRoundRobinOverServersAlternatingLeaves) {
  // Server order: 0 (leaf 0), 2 (leaf 1), 1 (leaf 0), 3 (leaf 1); each job starts at server 0.
  const Placement p = Place("spread", Small(), Jobs());
  EXPECT_EQ(p[0], (Gpus{0, 8}));
  EXPECT_EQ(p[1], (Gpus{1, 9, 4, 12}));
  EXPECT_EQ(p[2], (Gpus{2, 10, 5, 13, 3, 11, 6, 14}));
}

TEST(Placement, TopologyAwareKeepsTensorGroupsInAServerAndPipelinesUnderALeaf) {
  const Placement p = Place("topology-aware", Small(), Jobs());
  EXPECT_EQ(p[0], (Gpus{0, 1}));
  // Server 0 has 2 GPUs left: B's tensor group of 4 goes to server 1, still under leaf 0.
  EXPECT_EQ(p[1], (Gpus{4, 5, 6, 7}));
  // Leaf 0 holds one group of 2 (server 0): C's pipelines (2 groups of 2) go under leaf 1.
  EXPECT_EQ(p[2], (Gpus{8, 9, 10, 11, 12, 13, 14, 15}));
  const ClusterShape c = Small();
  for (int g = 0; g < 4; ++g) {  // C's tensor groups: ranks 2g, 2g + 1 share a server
    EXPECT_EQ(c.ServerOf(p[2][2 * g]), c.ServerOf(p[2][2 * g + 1]));
  }
}

TEST(Placement, DdlwmpPlacesTensorAndPipelineJobsFirstWithBestFit) {
  // Order: C (tensor and pipeline), B (tensor), A; C fills leaf 0, B a server of leaf 1, A the
  // fullest server with room, server 3.
  const Placement p = Place("ddlwmp", Small(), Jobs());
  EXPECT_EQ(p[2], (Gpus{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(p[1], (Gpus{8, 9, 10, 11}));
  EXPECT_EQ(p[0], (Gpus{12, 13}));
}

TEST(Placement, RefusesMoreGpusThanTheClusterHasAndUnknownPolicies) {
  try {
    Place("packed", Small(), {{"big", 12, 1, 1}, {"more", 8, 1, 1}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "placement: the jobs need 20 GPUs, the cluster has 16");
  }
  EXPECT_THROW(Place("random", Small(), Jobs()), Error);
  EXPECT_EQ(PlacementPolicies(),
            (std::vector<std::string>{"packed", "spread", "topology-aware", "ddlwmp"}));
}

TEST(Placement, EveryPolicyGivesEachGpuToOneRankAtMost) {
  for (const std::string& policy : PlacementPolicies()) {
    const Placement p = Place(policy, Small(), Jobs());
    std::vector<int> seen(16, 0);
    for (const Gpus& job : p) {
      for (int g : job) ++seen.at(static_cast<size_t>(g));
    }
    for (int n : seen) EXPECT_LE(n, 1) << policy;
    EXPECT_EQ(p[0].size() + p[1].size() + p[2].size(), 14u) << policy;
  }
}

}  // namespace
}  // namespace stratasim
