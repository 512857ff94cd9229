#include "sim/collectives/tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "sim/collectives/lowering.h"
#include "sim/collectives/test_util.h"

namespace stratasim::sim {
namespace {

using testing::Iota;
using testing::MakeCollective;
using testing::ReceivedBy;
using testing::SentBy;

FlowProgram Lower(const Collective& c, const GroupView& v, int channels = 1,
                  Fidelity f = Fidelity::kStep) {
  return LowerCollective(c, v, CollectiveChoice{"tree", "simple", channels}, f);
}

TEST(Tree, BinaryTreeHasTheOddPositionsAsLeaves) {
  EXPECT_EQ(BinaryTreeParents(8), (std::vector<int>{-1, 2, 4, 2, 0, 6, 4, 6}));
  EXPECT_EQ(BinaryTreeParents(6), (std::vector<int>{-1, 2, 4, 2, 0, 4}));
}

std::set<int> Interior(const std::vector<int>& parent) {
  std::set<int> s;
  for (int p : parent) {
    if (p >= 0) s.insert(p);
  }
  return s;
}

TEST(Tree, TheTwoTreesAreComplementary) {
  for (int n : {2, 4, 6, 8, 16}) {  // even: mirrored, no node interior in both
    const std::set<int> a = Interior(BinaryTreeParents(n)), b = Interior(MirroredTreeParents(n));
    for (int v : a) EXPECT_EQ(b.count(v), 0u) << "n=" << n << " node " << v;
  }
  for (int n : {3, 5, 7, 9}) {  // odd: shifted; only one node may be interior in both
    const std::set<int> a = Interior(BinaryTreeParents(n)), b = Interior(MirroredTreeParents(n));
    int both = 0;
    for (int v : a) both += static_cast<int>(b.count(v));
    EXPECT_LE(both, 1) << "n=" << n;
    const std::vector<int> mirrored = MirroredTreeParents(n);
    EXPECT_EQ(std::count(mirrored.begin(), mirrored.end(), -1), 1);
  }
}

TEST(Tree, AllReduceReducesUpAndBroadcastsDownHalfTheBufferPerTree) {
  // 4 servers of 2 GPUs: each server a chain of 2 below its head; double binary tree over
  // servers. Every non-root member of a tree sends S/2 up and receives S/2 down in it.
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(4, 2, 2), Iota(8));
  const double bytes = 4 * kPipelineChunkBytes;  // 2 chunks per half
  const FlowProgram p = Lower(MakeCollective(CollectiveKind::kAllReduce, Iota(8), bytes), v);
  EXPECT_EQ(p.flows.size(), 2u * 2 * 7 * 2);  // trees x directions x edges x chunks
  EXPECT_DOUBLE_EQ(testing::TotalBytes(p), 2 * 2 * 7 * bytes / 2);
  for (int m = 0; m < 8; ++m) EXPECT_GE(ReceivedBy(p, m), bytes / 2);
  // Step: each edge's second chunk follows its first on the connection.
  for (size_t f = 0; f < p.flows.size(); ++f) {
    const Flow& flow = p.flows[f];
    if (flow.follows < 0) continue;
    EXPECT_LT(flow.follows, static_cast<int>(f));
    EXPECT_EQ(p.flows[flow.follows].src, flow.src);
    EXPECT_EQ(p.flows[flow.follows].dst, flow.dst);
  }
  EXPECT_EQ(
      std::count_if(p.flows.begin(), p.flows.end(), [](const Flow& f) { return f.follows >= 0; }),
      2 * 2 * 7);  // the second chunk of every tree, direction and edge
  // Stream: one flow per edge and direction, same bytes in all; the two trees' flows over the
  // same ordered pair of members merge into one (sim/collectives/coalesce.h), so there are
  // fewer than trees x directions x edges = 28 of them.
  const FlowProgram s =
      Lower(MakeCollective(CollectiveKind::kAllReduce, Iota(8), bytes), v, 1, Fidelity::kStream);
  EXPECT_LT(s.flows.size(), 2u * 2 * 7);
  EXPECT_GE(s.flows.size(), 2u * 7);
  // Each pays the trees' latency path, up and down their height of 3 (a server's chain of 2,
  // then two levels of servers): 6 route latencies, 5 of them extra.
  for (const Flow& f : s.flows) {
    EXPECT_EQ(f.extra_route_latencies, 5);
    EXPECT_TRUE(f.deps.empty());
  }
  EXPECT_DOUBLE_EQ(testing::TotalBytes(s), testing::TotalBytes(p));
}

TEST(Tree, DownFlowsOfTheRootWaitForItsChildrenUpFlows) {
  const GroupView v = testing::FlatView(3);  // one server: the tree is the chain 0 - 1 - 2
  const FlowProgram p = Lower(MakeCollective(CollectiveKind::kAllReduce, Iota(3), 1000), v);
  // Tree 1: up 2->1, 1->0; down 0->1 waits for 1->0; 1->2 waits for 0->1.
  ASSERT_EQ(p.flows.size(), 8u);
  EXPECT_EQ(p.flows[0].src, 2);
  EXPECT_EQ(p.flows[1].deps, (std::vector<int>{0}));
  EXPECT_EQ(p.flows[2].src, 0);
  EXPECT_EQ(p.flows[2].deps, (std::vector<int>{1}));
  EXPECT_EQ(p.flows[3].deps, (std::vector<int>{2}));
}

TEST(Tree, BroadcastAndReduceUseOneTreeRootedAtTheRoot) {
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(4, 2, 2), Iota(8));
  Collective c = MakeCollective(CollectiveKind::kBroadcast, Iota(8), 1000);
  c.root = 5;
  const FlowProgram b = Lower(c, v);
  EXPECT_EQ(b.flows.size(), 7u);
  EXPECT_DOUBLE_EQ(ReceivedBy(b, 5), 0);
  for (int m = 0; m < 8; ++m) {
    if (m != 5) {
      EXPECT_DOUBLE_EQ(ReceivedBy(b, m), 1000);
    }
  }
  c.kind = CollectiveKind::kReduce;
  const FlowProgram r = Lower(c, v);
  EXPECT_DOUBLE_EQ(SentBy(r, 5), 0);
  for (int m = 0; m < 8; ++m) {
    if (m != 5) {
      EXPECT_DOUBLE_EQ(SentBy(r, m), 1000);
    }
  }
}

TEST(Tree, ChannelsAndTreesUseDifferentHeadsHenceNics) {
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(4, 8, 4), Iota(32));
  const FlowProgram p = Lower(MakeCollective(CollectiveKind::kAllReduce, Iota(32), 64e6), v, 2);
  std::set<int> nics;
  for (const Flow& f : p.flows) {
    if (v.members[f.src].server == 1 && v.members[f.dst].server != 1) {
      nics.insert(v.members[f.src].nic);
    }
  }
  EXPECT_EQ(nics.size(), 4u);
}

// A rooted tree's channels leave the root's server through different NICs: its chain starts at
// the root, but each channel hands the data to the child servers from the member on the
// children's rail (before, every channel went out through the root's one NIC).
TEST(Tree, RootedChannelsLeaveTheRootsServerThroughDifferentNics) {
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(4, 8, 8), Iota(32));
  for (CollectiveKind k : {CollectiveKind::kBroadcast, CollectiveKind::kReduce}) {
    Collective c = MakeCollective(k, Iota(32), 64e6);
    c.root = 3;
    const FlowProgram p = Lower(c, v, 4);
    std::set<int> nics;
    for (const Flow& f : p.flows) {
      const int inside = k == CollectiveKind::kBroadcast ? f.src : f.dst;
      const int outside = k == CollectiveKind::kBroadcast ? f.dst : f.src;
      if (v.members[inside].server == 0 && v.members[outside].server != 0) {
        nics.insert(v.members[inside].nic);
        // The other end is on the same rail.
        EXPECT_EQ(v.members[outside].nic, v.members[inside].nic);
      }
    }
    EXPECT_EQ(nics.size(), 4u) << ToString(k);
    EXPECT_DOUBLE_EQ(k == CollectiveKind::kBroadcast ? ReceivedBy(p, 3) : SentBy(p, 3), 0);
  }
}

// On a DGX-1 the chains inside servers follow NVLink: instance i (of channels x 2 trees) along
// cycle i mod 2, from the member its tree between servers reaches. With 4 channels the 8
// chains use all 16 NVLinks both ways, the busiest direction carrying 4 instances' S/8 (all 8
// on the first cycle before: S), and each server still leaves through all 4 of its NICs.
TEST(Tree, DgxOneChainsUseBothNvLinkCycles) {
  const ClusterSpec c = testing::Dgx1Cluster(2, 4);
  const GroupView v = MakeGroupView(c, Iota(16));
  ASSERT_EQ(v.nvlink_cycles, 2);
  const double bytes = 64e6;
  const FlowProgram p = Lower(MakeCollective(CollectiveKind::kAllReduce, Iota(16), bytes), v, 4);
  std::map<std::pair<int, int>, double> intra;  // bytes per directed member pair in a server
  std::set<std::pair<int, int>> nics;           // (server, NIC) of members sending across
  for (const Flow& f : p.flows) {
    const GroupMember& a = v.members[f.src];
    const GroupMember& b = v.members[f.dst];
    if (a.server != b.server) {
      nics.insert({a.server, a.nic});
      continue;
    }
    EXPECT_TRUE(testing::NvLinked(c, a.local, b.local)) << a.local << "-" << b.local;
    intra[{f.src, f.dst}] += f.bytes;
  }
  EXPECT_EQ(intra.size(), 2u * 16 * 2);  // 2 servers x 16 NVLinks x both ways
  double busiest = 0;
  for (const auto& [edge, b] : intra) busiest = std::max(busiest, b);
  EXPECT_DOUBLE_EQ(busiest, 4 * bytes / 8);
  EXPECT_EQ(nics.size(), 2u * 4);
}

// Rooted trees too: on a DGX-1 channel c chains each server along NVLink cycle c mod 2, so 4
// channels of a broadcast use NVLinks of both cycles in a server without the root (8 of the
// first cycle's before).
TEST(Tree, DgxOneRootedChainsUseBothNvLinkCycles) {
  const ClusterSpec c = testing::Dgx1Cluster(2, 4);
  const GroupView v = MakeGroupView(c, Iota(16));
  for (CollectiveKind kind : {CollectiveKind::kBroadcast, CollectiveKind::kReduce}) {
    const FlowProgram p = Lower(MakeCollective(kind, Iota(16), 64e6), v, 4);
    std::set<std::pair<int, int>> links;  // NVLinks used in server 1, as (low, high) locals
    for (const Flow& f : p.flows) {
      const GroupMember& a = v.members[f.src];
      const GroupMember& b = v.members[f.dst];
      if (a.server != 1 || b.server != 1) continue;
      EXPECT_TRUE(testing::NvLinked(c, a.local, b.local)) << a.local << "-" << b.local;
      links.insert({std::min(a.local, b.local), std::max(a.local, b.local)});
    }
    EXPECT_EQ(links.size(), 16u) << ToString(kind);
  }
}

// With a NIC per GPU pair (DGX-1, 4 NICs) the channels' heads take the NICs in turn: a
// 4-channel broadcast over 4 servers (server tree 0 -> 2 -> {1, 3}) leaves the root's server
// and the interior server 2 through all 4 NICs, each with S/4 per child server. (Heads at
// evenly spaced positions of the NVLink-cycle order used GPUs 0, 2, 7 and 6: NIC 3 twice, NIC 2
// never.)
TEST(Tree, HeadsSpreadOverNicsSharedByGpuPairs) {
  const GroupView v = MakeGroupView(testing::Dgx1Cluster(4, 4), Iota(32));
  const double bytes = 64e6;
  const FlowProgram p = Lower(MakeCollective(CollectiveKind::kBroadcast, Iota(32), bytes), v, 4);
  std::map<std::pair<int, int>, double> sent;  // by (server, NIC), to other servers
  for (const Flow& f : p.flows) {
    const GroupMember& a = v.members[f.src];
    if (a.server != v.members[f.dst].server) sent[{a.server, a.nic}] += f.bytes;
  }
  EXPECT_EQ(sent.size(), 2u * 4);
  for (const auto& [at, b] : sent) {
    const int children = at.first == 0 ? 1 : 2;
    EXPECT_NEAR(b, children * bytes / 4, 1e-3) << "server " << at.first << ", NIC " << at.second;
  }
}

}  // namespace
}  // namespace stratasim::sim
