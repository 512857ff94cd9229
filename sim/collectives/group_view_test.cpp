#include "sim/collectives/group_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "core/error.h"
#include "sim/collectives/member_order.h"
#include "sim/collectives/protocol.h"
#include "sim/collectives/test_util.h"

namespace stratasim::sim {
namespace {

using testing::Iota;
using testing::NvSwitchCluster;

TEST(GroupView, NvSwitchServersAndTheirNics) {
  const GroupView v = MakeGroupView(NvSwitchCluster(2, 8, 4), {5, 9, 10, 15});
  ASSERT_EQ(v.members.size(), 4u);
  EXPECT_EQ(v.members[0].server, 0);
  EXPECT_EQ(v.members[0].local, 5);
  EXPECT_EQ(v.members[0].nic, 2);  // 2 GPUs per NIC
  EXPECT_EQ(v.members[3].nic, 3);
  EXPECT_EQ(v.num_servers, 2);
  EXPECT_EQ(v.max_nics_per_server, 3);  // server 1: locals 1, 2, 7 -> NICs 0, 1, 3
  EXPECT_DOUBLE_EQ(v.intra_Bps, 450e9);
  EXPECT_DOUBLE_EQ(v.intra_latency_s, 2e-6);  // up and down port
  EXPECT_EQ(v.intra_fabric, IntraFabric::kNvSwitch);
  EXPECT_DOUBLE_EQ(v.inter_Bps, 50e9);
  EXPECT_DOUBLE_EQ(v.inter_latency_s, 2 * 2e-6 + 1e-6);
}

TEST(GroupView, LeafSpineCountsThreeSwitches) {
  ClusterSpec c = NvSwitchCluster(4, 8, 8);
  c.network.kind = NetworkKind::kLeafSpine;
  c.network.servers_per_leaf = 2;
  EXPECT_DOUBLE_EQ(MakeGroupView(c, Iota(32)).inter_latency_s, 2 * 2e-6 + 3 * 1e-6);
}

// 4 GPUs, 2 per PCIe switch, one switch per socket, NVLink bridges 0-1 and 2-3 (RTX 3090 box).
ClusterSpec PcieBox() {
  ClusterSpec c;
  ServerGroup g;
  g.name = "box";
  g.gpu = "RTX3090";
  g.gpus_per_server = 4;
  g.pcie = PcieSpec{2, 2, LinkSpec{25e9, 1e-6}, LinkSpec{20e9, 2e-6}, LinkSpec{15e9, 3e-6}};
  g.nvlink = NvLinkSpec{{{0, 1}, {2, 3}}, LinkSpec{56e9, 0.5e-6}};
  g.nics = NicSpec{1, LinkSpec{12.5e9, 2e-6}};
  c.groups.push_back(g);
  return c;
}

TEST(GroupView, NvLinkWhenEveryPairIsBridged) {
  const GroupView v = MakeGroupView(PcieBox(), {0, 1});
  EXPECT_DOUBLE_EQ(v.intra_Bps, 56e9);
  EXPECT_DOUBLE_EQ(v.intra_latency_s, 0.5e-6);
  EXPECT_EQ(v.intra_fabric, IntraFabric::kNvLink);
}

TEST(GroupView, PciePathAcrossSocketsOtherwise) {
  const GroupView same_switch = MakeGroupView(PcieBox(), {0, 1, 2});
  // 0-2 crosses switches and sockets: min(25, 20, 15) GB/s; 2x1 + 2x2 + 3 us.
  EXPECT_DOUBLE_EQ(same_switch.intra_Bps, 15e9);
  EXPECT_DOUBLE_EQ(same_switch.intra_latency_s, 9e-6);
  EXPECT_EQ(same_switch.intra_fabric, IntraFabric::kPcie);
}

// Rings follow the cube mesh's NVLinks, as NCCL's do: ServerBlocks lists the members along an
// NVLink cycle, the ring hop is NVLink, and hops between cycle neighbours take NVLink's step
// latency. The slowest pair (for direct flows) is still PCIe.
TEST(GroupView, RingsFollowAPartialNvLinkMesh) {
  const ClusterSpec dgx1 = testing::Dgx1Cluster(1, 4);
  const GroupView v = MakeGroupView(dgx1, Iota(8));
  EXPECT_EQ(v.intra_fabric, IntraFabric::kPcie);
  EXPECT_EQ(v.ring_intra_fabric, IntraFabric::kNvLink);
  EXPECT_DOUBLE_EQ(v.ring_intra_Bps, 25e9);
  const std::vector<int> ring = ServerBlocks(v).at(0);
  ASSERT_EQ(ring.size(), 8u);
  EXPECT_EQ(ring, (std::vector<int>{0, 1, 2, 3, 7, 5, 6, 4}));  // the first cycle found from 0
  for (int i = 0; i < 8; ++i) {
    const int a = ring[i], b = ring[(i + 1) % 8];
    EXPECT_TRUE(testing::NvLinked(dgx1, a, b)) << a << "-" << b;
    EXPECT_EQ(HopBetween(v, a, b), HopKind::kNvLink);
  }
  EXPECT_EQ(HopBetween(v, 1, 6), HopKind::kPcie);  // no NVLink between them
  // Fully bridged members or no cycle: member order, and the ring hop is the intra hop; a
  // bridged pair still talks over its bridge, as the platform routes it.
  const GroupView box = MakeGroupView(PcieBox(), Iota(4));
  EXPECT_EQ(ServerBlocks(box).at(0), Iota(4));
  EXPECT_EQ(box.ring_intra_fabric, IntraFabric::kPcie);
  EXPECT_DOUBLE_EQ(box.ring_intra_Bps, box.intra_Bps);
  EXPECT_EQ(box.nvlink_cycles, 0);
  EXPECT_EQ(HopBetween(box, 0, 1), HopKind::kNvLink);
  EXPECT_EQ(HopBetween(box, 1, 2), HopKind::kPcie);
}

// The cube mesh (4 NVLinks per GPU here) holds two edge-disjoint cycles through all 8 GPUs:
// the first found, then one through the 8 NVLinks it left. Every member has a place on each.
TEST(GroupView, CubeMeshHoldsTwoEdgeDisjointNvLinkCycles) {
  const ClusterSpec dgx1 = testing::Dgx1Cluster(1, 4);
  const GroupView v = MakeGroupView(dgx1, Iota(8));
  ASSERT_EQ(v.nvlink_cycles, 2);
  std::set<std::pair<int, int>> used;
  for (int cycle = 0; cycle < 2; ++cycle) {
    std::vector<int> order(8, -1);
    for (int m = 0; m < 8; ++m) {
      ASSERT_EQ(v.members[m].nvlink_cycle_positions.size(), 2u);
      order.at(v.members[m].nvlink_cycle_positions[cycle]) = m;
    }
    for (int i = 0; i < 8; ++i) {
      const int a = std::min(order[i], order[(i + 1) % 8]);
      const int b = std::max(order[i], order[(i + 1) % 8]);
      EXPECT_TRUE(testing::NvLinked(dgx1, a, b)) << a << "-" << b;
      EXPECT_TRUE(used.insert({a, b}).second) << "NVLink " << a << "-" << b << " used twice";
    }
  }
  EXPECT_EQ(used.size(), 16u);  // every NVLink of the mesh
  // GPUs 0, 1, 5, 4 (a face of the cube: 0-1, 1-5, 5-4, 4-0) hold one; a fully linked quad
  // needs none (every hop is an NVLink whatever the order).
  EXPECT_EQ(MakeGroupView(dgx1, {0, 1, 4, 5}).nvlink_cycles, 1);
  EXPECT_EQ(MakeGroupView(dgx1, {0, 1, 2, 3}).nvlink_cycles, 0);
}

// Each member's share of its server's NICs, on the worst-served server: a DGX-1's 4 EDR NICs
// (12.5 GB/s) for its 8 GPUs give 6.25 GB/s, less than an 8-NIC NVSwitch server's 50 GB/s.
TEST(GroupView, NicShareIsTheWorstServedServers) {
  ClusterSpec c = NvSwitchCluster(1, 8, 8);
  c.groups.push_back(testing::Dgx1Cluster(1, 4).groups[0]);
  EXPECT_DOUBLE_EQ(MakeGroupView(c, Iota(16)).nic_share_per_member_Bps, 6.25e9);
  EXPECT_DOUBLE_EQ(MakeGroupView(c, Iota(8)).nic_share_per_member_Bps, 50e9);
  // Two members of the DGX-1 on two NICs: each has one.
  EXPECT_DOUBLE_EQ(MakeGroupView(c, {8, 10}).nic_share_per_member_Bps, 12.5e9);
}

TEST(GroupView, RejectsRanksOutsideTheCluster) {
  EXPECT_THROW(MakeGroupView(NvSwitchCluster(1, 8, 1), {3, 8}), Error);
}

}  // namespace
}  // namespace stratasim::sim
