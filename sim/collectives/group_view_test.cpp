#include "sim/collectives/group_view.h"

#include <gtest/gtest.h>

#include "core/error.h"
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

TEST(GroupView, RejectsRanksOutsideTheCluster) {
  EXPECT_THROW(MakeGroupView(NvSwitchCluster(1, 8, 1), {3, 8}), Error);
}

}  // namespace
}  // namespace stratasim::sim
