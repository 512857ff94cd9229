// Bandwidth sharing: flows through one link split it max-min; an oversubscribed spine limits
// what crosses it.
#include <gtest/gtest.h>

#include "core/task_graph.h"
#include "sim/executor.h"
#include "tests/test_clusters.h"

namespace stratasim {
namespace {

using testing::NvSwitchCluster;
using testing::NvSwitchOptions;

struct Transfer {
  int src, dst;
  double bytes;
};

// Simulates independent transfers that all start at time 0; returns each one's end time.
std::vector<double> Transfers(const ClusterSpec& c, const std::vector<Transfer>& xs) {
  TaskGraph g(c.NumGpus());
  std::vector<TaskId> recvs;
  for (size_t i = 0; i < xs.size(); ++i) {
    Task send, recv;
    // Each transfer on its own streams, so none waits for another.
    send.stream = recv.stream = g.Stream("p2p" + std::to_string(i));
    send.name = recv.name = "x" + std::to_string(i);
    recvs.push_back(g.AddTransfer(xs[i].src, xs[i].dst, xs[i].bytes, send, recv).second);
  }
  ExecutionTrace t = sim::Simulate(g, c, SimulationSpec{});
  std::vector<double> ends;
  for (TaskId r : recvs) ends.push_back(t.records[r].end_s);
  return ends;
}

TEST(Contention, TwoFlowsIntoOneGpuShareItsPort) {
  NvSwitchOptions o;
  const ClusterSpec c = NvSwitchCluster(o);
  const double bytes = 3e9, latency = 2 * o.nvswitch_latency_s;
  const double alone = Transfers(c, {{0, 2, bytes}})[0];
  EXPECT_NEAR(alone, latency + bytes / o.nvswitch_Bps, 1e-3 * alone);
  // Both flows enter GPU 2 through its one NVSwitch port: each gets half of it.
  const std::vector<double> shared = Transfers(c, {{0, 2, bytes}, {1, 2, bytes}});
  for (double end : shared) {
    EXPECT_NEAR(end, latency + bytes / (o.nvswitch_Bps / 2), 1e-3 * end);
  }
  // Full duplex: a flow the other way does not slow either.
  const std::vector<double> opposite = Transfers(c, {{0, 2, bytes}, {2, 0, bytes}});
  EXPECT_NEAR(opposite[0], alone, 1e-6 * alone);
  EXPECT_NEAR(opposite[1], alone, 1e-6 * alone);
}

// `duplex: half`: the two directions share one link, so opposite flows split it, and on a
// half-duplex NIC a route still pays the switch latency once.
TEST(Contention, HalfDuplexLinksShareTheirBandwidthBetweenDirections) {
  const NvSwitchOptions o = testing::NvSwitchLayout(2, 2, 2);
  ClusterSpec c = NvSwitchCluster(o);
  c.groups[0].nvswitch->link.full_duplex = false;
  c.groups[0].nics.link.full_duplex = false;
  const double bytes = 3e9;
  const double nvswitch = 2 * o.nvswitch_latency_s, nic = 2 * o.nic_latency_s + o.switch_latency_s;
  // Alone, a flow is as fast as on a full-duplex link.
  EXPECT_NEAR(Transfers(c, {{0, 1, bytes}})[0], nvswitch + bytes / o.nvswitch_Bps, 1e-6);
  EXPECT_NEAR(Transfers(c, {{0, 2, bytes}})[0], nic + bytes / o.nic_Bps, 1e-6);
  // Both ways at once: each direction gets half.
  for (double end : Transfers(c, {{0, 1, bytes}, {1, 0, bytes}})) {
    EXPECT_NEAR(end, nvswitch + bytes / (o.nvswitch_Bps / 2), 1e-3 * end);
  }
  for (double end : Transfers(c, {{0, 2, bytes}, {2, 0, bytes}})) {
    EXPECT_NEAR(end, nic + bytes / (o.nic_Bps / 2), 1e-3 * end);
  }
}

TEST(Contention, GpusSharingANicSplitIt) {
  NvSwitchOptions o;
  o.servers = 2;
  o.gpus_per_server = 4;
  o.nics = 1;  // four GPUs behind one NIC
  const ClusterSpec c = NvSwitchCluster(o);
  const double bytes = 1e9;
  const double latency = 2 * o.nic_latency_s + o.switch_latency_s;
  const std::vector<double> ends = Transfers(c, {{0, 4, bytes}, {1, 5, bytes}});
  for (double end : ends) EXPECT_NEAR(end, latency + bytes / (o.nic_Bps / 2), 1e-3 * end);
}

ClusterSpec LeafSpine(double oversubscription, const NvSwitchOptions& o) {
  ClusterSpec c = NvSwitchCluster(o);
  c.network.kind = NetworkKind::kLeafSpine;
  c.network.servers_per_leaf = 2;
  c.network.oversubscription = oversubscription;
  return c;
}

TEST(Contention, OversubscribedSpineLimitsCrossLeafFlows) {
  NvSwitchOptions o;
  o.servers = 4;  // leaves {0, 1} and {2, 3}
  o.gpus_per_server = 1;
  o.nics = 1;
  const double bytes = 1e9;
  // Leaf uplink = 2 servers x 25 GB/s / 4 = 12.5 GB/s: one cross-leaf flow gets that, not the
  // NIC's 25 GB/s; a flow inside a leaf still gets the NIC's.
  const ClusterSpec c = LeafSpine(4, o);
  const double cross_latency = 2 * o.nic_latency_s + 3 * o.switch_latency_s;
  const double uplink = 2 * o.nic_Bps / 4;
  const double cross = Transfers(c, {{0, 2, bytes}})[0];
  EXPECT_NEAR(cross, cross_latency + bytes / uplink, 1e-3 * cross);
  const double local = Transfers(c, {{0, 1, bytes}})[0];
  EXPECT_NEAR(local, 2 * o.nic_latency_s + o.switch_latency_s + bytes / o.nic_Bps, 1e-3 * local);
  // Two cross-leaf flows from one leaf share its uplink.
  const std::vector<double> two = Transfers(c, {{0, 2, bytes}, {1, 3, bytes}});
  for (double end : two) EXPECT_NEAR(end, cross_latency + bytes / (uplink / 2), 1e-3 * end);
  // Each GPU leaves through its own NIC, wherever it sits under its leaf: two cross-leaf flows
  // from different servers of one leaf do not share a NIC (only the uplink).
  NvSwitchOptions wide = o;
  wide.gpus_per_server = 2;
  wide.nics = 2;
  const ClusterSpec c2 = LeafSpine(1, wide);  // servers {0, 1} | {2, 3}, ranks 2s and 2s+1
  const std::vector<double> own = Transfers(c2, {{3, 4, bytes}, {0, 6, bytes}});
  for (double end : own) EXPECT_NEAR(end, cross_latency + bytes / o.nic_Bps, 1e-3 * end);
  // Without oversubscription the NIC is the bottleneck again.
  const double full = Transfers(LeafSpine(1, o), {{0, 2, bytes}})[0];
  EXPECT_NEAR(full, cross_latency + bytes / o.nic_Bps, 1e-3 * full);
}

// Rail-optimized: NIC k of every server on leaf k. Same-rail traffic crosses one switch and no
// uplink; cross-rail traffic crosses the spine through both rails' (oversubscribed) uplinks.
TEST(Contention, RailOptimizedKeepsSameRailTrafficOffTheSpine) {
  const NvSwitchOptions o = testing::NvSwitchLayout(4, 2, 2);
  ClusterSpec c = NvSwitchCluster(o);
  c.network.kind = NetworkKind::kRailOptimized;
  c.network.oversubscription = 8;  // rail uplink: 4 servers x 25 GB/s / 8 = 12.5 GB/s
  const double bytes = 1e9;
  const double same_rail = Transfers(c, {{0, 2, bytes}})[0];  // GPU 0 of servers 0 and 1
  EXPECT_NEAR(same_rail, 2 * o.nic_latency_s + o.switch_latency_s + bytes / o.nic_Bps,
              1e-3 * same_rail);
  const double cross_rail = Transfers(c, {{0, 3, bytes}})[0];  // GPU 0 -> GPU 1 elsewhere
  EXPECT_NEAR(cross_rail, 2 * o.nic_latency_s + 3 * o.switch_latency_s + bytes / 12.5e9,
              1e-3 * cross_rail);
  // Inside a server the NVSwitch is used, whatever the rails.
  const double local = Transfers(c, {{0, 1, bytes}})[0];
  EXPECT_NEAR(local, 2 * o.nvswitch_latency_s + bytes / o.nvswitch_Bps, 1e-3 * local);
}

// A commodity PCIe box of 4 RTX 3090: two GPUs per PCIe switch, two switches, one per CPU
// socket; links of 1 us.
ClusterSpec PcieBox(double pcie_Bps, double uplink_Bps, double socket_Bps) {
  ClusterSpec c;
  ServerGroup g;
  g.name = "box";
  g.gpu = "RTX3090";
  g.gpus_per_server = 4;
  g.pcie = PcieSpec{2, 2, LinkSpec{pcie_Bps, 1e-6}, LinkSpec{uplink_Bps, 1e-6},
                    LinkSpec{socket_Bps, 1e-6}};
  c.groups.push_back(g);
  testing::ResolveGpus(c);
  return c;
}

// Traffic between sockets crosses the socket link, which two such flows share.
TEST(Contention, PcieTrafficBetweenSocketsSharesTheSocketLink) {
  const ClusterSpec c = PcieBox(15.75e9, 15.75e9, 10e9);
  const double bytes = 1e9;
  const double same_switch = Transfers(c, {{0, 1, bytes}})[0];
  EXPECT_NEAR(same_switch, 2e-6 + bytes / 15.75e9, 1e-3 * same_switch);
  // GPU 0 -> GPU 2: pcie up, switch uplink up, socket link, uplink down, pcie down.
  const double cross = Transfers(c, {{0, 2, bytes}})[0];
  EXPECT_NEAR(cross, 5e-6 + bytes / 10e9, 1e-3 * cross);
  const std::vector<double> two = Transfers(c, {{0, 2, bytes}, {1, 3, bytes}});
  for (double end : two) EXPECT_NEAR(end, 5e-6 + bytes / 5e9, 1e-3 * end);
}

// Flows sharing a link split it equally whatever their routes' latencies: NVLink, PCIe and
// InfiniBand share by credits, per flow. (SimGrid's CM02 model would weight each flow by the
// inverse of its route latency, TCP's RTT unfairness: a 2 us flow would take 4x the share of
// an 8 us one.) GPU 0 receives from GPU 1 under its PCIe switch (route latency 2 us) and
// from GPU 2 under the other socket (5 us); both cross GPU 0's PCIe link, the bottleneck.
TEST(Contention, FlowsOfDifferentRouteLatencyShareALinkEqually) {
  const ClusterSpec c = PcieBox(15.75e9, 31.5e9, 40e9);
  const double bytes = 1e9;
  const std::vector<double> ends = Transfers(c, {{1, 0, bytes}, {2, 0, bytes}});
  // Each gets half of GPU 0's link until both finish (equal sizes: together).
  EXPECT_NEAR(ends[0], 2e-6 + bytes / (15.75e9 / 2), 1e-3 * ends[0]);
  EXPECT_NEAR(ends[1], 5e-6 + bytes / (15.75e9 / 2), 1e-3 * ends[1]);
}

}  // namespace
}  // namespace stratasim
