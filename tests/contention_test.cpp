// Bandwidth sharing: flows through one link split it max-min; an oversubscribed spine limits
// what crosses it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/task_graph.h"
#include "sim/collectives/protocol.h"
#include "sim/collectives/registry.h"
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

// ---- Collectives that contend -------------------------------------------------------------
// Each test below runs collectives of different groups at once (each member on a stream of
// its own, every member joining at time 0) and compares each group's completion with an
// alpha-beta closed form (docs/collectives.md) whose bandwidth is the group's max-min share
// of its bottleneck link. Ring/simple/1 channel unless said otherwise.

struct Group {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::vector<int> ranks;
  double bytes = 0;
  std::string algorithm = "ring";
};

// Runs every group's collective at once; returns when each finished (its last member's end).
std::vector<double> Collectives(const ClusterSpec& c, const std::vector<Group>& groups,
                                Fidelity fidelity) {
  TaskGraph g(c.NumGpus());
  std::vector<std::vector<TaskId>> members;
  for (size_t i = 0; i < groups.size(); ++i) {
    Task member;
    member.stream = g.Stream("comm" + std::to_string(i));
    member.name = "c" + std::to_string(i);
    Collective col;
    col.kind = groups[i].kind;
    col.ranks = groups[i].ranks;
    col.bytes = groups[i].bytes;
    col.algorithm = groups[i].algorithm;
    members.push_back(g.AddCollective(col, member));
  }
  SimulationSpec spec;
  spec.fidelity = fidelity;
  spec.collectives.protocol = "simple";
  spec.collectives.channels = 1;
  const ExecutionTrace t = sim::Simulate(g, c, spec);
  std::vector<double> ends;
  for (size_t i = 0; i < groups.size(); ++i) {
    EXPECT_EQ(t.collective_algorithms.at(i), groups[i].algorithm + "/simple/1ch");
    double end = 0;
    for (TaskId m : members[i]) end = std::max(end, t.records[m].end_s);
    ends.push_back(end);
  }
  return ends;
}

// NCCL's simple-protocol latencies (sim/collectives/protocol.h); every hop here is a network
// hop between servers.
sim::NcclAlgorithm Figures(const std::string& algorithm) {
  return sim::FindCollectiveAlgorithm(CollectiveKind::kAllReduce, algorithm).nccl;
}
double Base(const std::string& algorithm) {
  return sim::BaseLatencySeconds(Figures(algorithm), sim::Protocol::kSimple);
}
double NetStep(const std::string& algorithm) {
  return sim::StepLatencySeconds(Figures(algorithm), sim::Protocol::kSimple, sim::HopKind::kNet);
}

// Ring all-reduce of S bytes over n members, every edge a network hop of route latency alpha
// at `bandwidth` per direction: b + 2(n-1)(delta + alpha + S/(n B)).
double RingAllReduce(int n, double bytes, double alpha, double bandwidth) {
  return Base("ring") + 2.0 * (n - 1) * (NetStep("ring") + alpha + bytes / (n * bandwidth));
}

constexpr Fidelity kStepAndStream[] = {Fidelity::kStep, Fidelity::kStream};

// Two communicators on the same servers, one NIC per server: group A is GPU 0 of every
// server, group B GPU 1. Each ring edge of A (server s -> s+1) leaves through NIC s and
// enters through NIC s+1, and so does B's edge between the same servers: every NIC direction
// carries exactly one flow of each group, and nothing else is shared (GPUs have their own
// NVSwitch ports, unused here). Max-min on a NIC direction of bandwidth B shared by two flows
// with no other bottleneck: B/2 each. Alone a group gets B:
//   T_alone  = b + 2(n-1)(delta_net + alpha + S/(n B))
//   T_shared = b + 2(n-1)(delta_net + alpha + S/(n B/2))
// with alpha = NIC up + switch + NIC down. Both rings are identical and start together, so
// at step fidelity the two groups' step-k flows run exactly at the same time on each NIC; at
// stream fidelity each edge is one flow of 2(n-1)/n S for the whole run, alike in both
// groups. Both fidelities apply (rings are pipelined edges) and are checked. S = 1 GB: the
// bandwidth term (>= 80 ms) dwarfs the latencies (< 0.1 ms), so halving B nearly doubles T.
TEST(Contention, AllReduceGroupsSharingNicsEachGetHalfOfThem) {
  for (int servers : {2, 4}) {
    const NvSwitchOptions o = testing::NvSwitchLayout(servers, 2, 1);
    const ClusterSpec c = NvSwitchCluster(o);
    const double bytes = 1e9, alpha = 2 * o.nic_latency_s + o.switch_latency_s;
    Group a, b;
    for (int s = 0; s < servers; ++s) {
      a.ranks.push_back(2 * s);
      b.ranks.push_back(2 * s + 1);
    }
    a.bytes = b.bytes = bytes;
    const double alone = RingAllReduce(servers, bytes, alpha, o.nic_Bps);
    const double shared = RingAllReduce(servers, bytes, alpha, o.nic_Bps / 2);
    for (Fidelity f : kStepAndStream) {
      const std::string what = std::to_string(servers) + " servers, " + std::string(ToString(f));
      for (const Group& g : {a, b}) {
        const double t = Collectives(c, {g}, f)[0];
        EXPECT_NEAR(t, alone, 0.02 * alone) << what << " alone";
      }
      for (double t : Collectives(c, {a, b}, f)) {
        EXPECT_NEAR(t, shared, 0.02 * shared) << what << " together";
        EXPECT_GT(t, 1.9 * alone) << what;
      }
    }
  }
}

// Leaf-spine, 2 servers per leaf, 2 GPUs per server each with its own 25 GB/s NIC,
// oversubscription 8: a leaf's uplink is 2 x 2 x 25 / 8 = 12.5 GB/s per direction, below a
// NIC. Ranks 2s, 2s+1 on server s; leaves {servers 0, 1} and {2, 3}.
//   A = {0, 4}: GPU 0 of servers 0 and 2, across the spine;
//   B = {3, 7}: GPU 1 of servers 1 and 3, across the spine through other NICs than A's;
//   C = {1, 2} (`in`): GPU 1 of server 0 and GPU 0 of server 1, inside leaf 0, NICs of their own.
// A's flow 0 -> 4 crosses NIC, leaf 0's uplink up, leaf 1's uplink down, NIC: alone its
// bottleneck is the uplink U, not the NIC. With B at once, each uplink direction carries one
// flow of A and one of B and nothing else: U/2 each (their NICs are not shared). C never
// leaves leaf 0 and shares no link with A or B: it keeps its NIC's bandwidth. So
//   A, B alone:    b + 2(delta_net + alpha_x + S/(2 U))
//   A, B together: b + 2(delta_net + alpha_x + S/U)
//   C, any time:   b + 2(delta_net + alpha_l + S/(2 B_nic))
// with alpha_x = 2 NIC + 3 switch latencies (leaf, spine, leaf) and alpha_l = 2 NIC + 1.
TEST(Contention, AllReduceGroupsAcrossAnOversubscribedSpineShareItsUplink) {
  const NvSwitchOptions o = testing::NvSwitchLayout(4, 2, 2);
  const ClusterSpec c = LeafSpine(8, o);
  const double bytes = 1e9, uplink = 2 * 2 * o.nic_Bps / 8;
  const double cross = 2 * o.nic_latency_s + 3 * o.switch_latency_s;
  const double local = 2 * o.nic_latency_s + o.switch_latency_s;
  Group a, b, in;
  a.ranks = {0, 4};
  b.ranks = {3, 7};
  in.ranks = {1, 2};
  a.bytes = b.bytes = in.bytes = bytes;
  const double alone = RingAllReduce(2, bytes, cross, uplink);
  const double shared = RingAllReduce(2, bytes, cross, uplink / 2);
  const double in_leaf = RingAllReduce(2, bytes, local, o.nic_Bps);
  for (Fidelity f : kStepAndStream) {
    const std::string what(ToString(f));
    EXPECT_NEAR(Collectives(c, {a}, f)[0], alone, 0.02 * alone) << what;
    EXPECT_NEAR(Collectives(c, {b}, f)[0], alone, 0.02 * alone) << what;
    EXPECT_NEAR(Collectives(c, {in}, f)[0], in_leaf, 0.02 * in_leaf) << what;
    const std::vector<double> all = Collectives(c, {a, b, in}, f);
    EXPECT_NEAR(all[0], shared, 0.02 * shared) << what;
    EXPECT_NEAR(all[1], shared, 0.02 * shared) << what;
    EXPECT_NEAR(all[2], in_leaf, 0.02 * in_leaf) << what;
    // The uplink, not the NIC: at the NIC's bandwidth A would take half as long.
    EXPECT_GT(all[0], 3.5 * RingAllReduce(2, bytes, cross, o.nic_Bps)) << what;
  }
}

// Two leaves of m servers, each server one GPU and one NIC of B = 25 GB/s (N = 2m members,
// ranks = servers); a leaf's uplink is m B / o per direction, shared when o > 1, one per rail
// (here one NIC per server: one per leaf, m B) when o = 1.
ClusterSpec TwoLeaves(int m, double oversubscription) {
  ClusterSpec c = NvSwitchCluster(testing::NvSwitchLayout(2 * m, 1, 1));
  c.network.kind = NetworkKind::kLeafSpine;
  c.network.servers_per_leaf = m;
  c.network.oversubscription = oversubscription;
  return c;
}

Group AllToAll(int n, double bytes, const std::string& algorithm) {
  Group g;
  g.kind = CollectiveKind::kAllToAll;
  for (int r = 0; r < n; ++r) g.ranks.push_back(r);
  g.bytes = bytes;
  g.algorithm = algorithm;
  return g;
}

// Direct all-to-all of S bytes per member (S/N to each other member) on TwoLeaves(m, o):
// every flow starts at once, after b + delta_net and its route latency, alpha_l = 2 NIC + 1
// switch latencies inside a leaf, alpha_x = 2 NIC + 3 switch latencies across the spine. Each
// leaf sends m (N-m) S/N across its uplink U = m B / o (and receives as much), in m(N-m)
// flows; each NIC direction carries m-1 in-leaf and N-m cross flows.
//
// Oversubscribed, with U/(m(N-m)) below a NIC's fair share B/(N-1) (m = 2: o > 1.5; m = 4:
// o > 1.75): max-min fixes every cross flow at U/(m(N-m)) on the uplink, the in-leaf flows
// split the rest of their NIC (more than that) and end first; the cross flows stay
// uplink-bound to the end. The uplink is busy from when they start (alpha_x), so
//   T = b + delta_net + alpha_x + m(N-m) (S/N) / U        (bytes across the uplink / U)
// m = 2: S/U; m = 4: 2S/U.
//
// Not oversubscribed, the NIC is the bottleneck (the rail uplink's m B is at most filled by
// the m(N-m) cross flows at B/(N-m) each once the in-leaf flows ended). A NIC carries
// (N-1) S/N each way and is busy from when its first flows start, the in-leaf ones after
// alpha_l (the cross ones start 2 switch latencies later and then share it: work-conserving):
//   T = b + delta_net + alpha_l + (N-1) S / (N B).
// Direct lowers with no pipelined edge, so stream is step (docs/collectives.md); both checked.
TEST(Contention, DirectAllToAllAcrossAnOversubscribedFatTreeIsLimitedByTheUplink) {
  const NvSwitchOptions o;  // the default link figures NvSwitchLayout gives TwoLeaves
  const double bytes = 1e9, nic = o.nic_Bps;
  const double head = Base("ring") + NetStep("ring");
  const double local = 2 * o.nic_latency_s + o.switch_latency_s;
  const double cross = 2 * o.nic_latency_s + 3 * o.switch_latency_s;
  for (int m : {2, 4}) {
    const int n = 2 * m;
    const Group g = AllToAll(n, bytes, "direct");
    for (Fidelity f : kStepAndStream) {
      const std::string what = std::to_string(n) + " GPUs, " + std::string(ToString(f));
      const double full = Collectives(TwoLeaves(m, 1), {g}, f)[0];
      const double full_expected = head + local + (n - 1.0) * bytes / (n * nic);
      EXPECT_NEAR(full, full_expected, 0.02 * full_expected) << what;
      for (double over : {2.0, 4.0}) {
        const double uplink = m * nic / over;
        const double expected = head + cross + m * (n - m) * (bytes / n) / uplink;
        const double t = Collectives(TwoLeaves(m, over), {g}, f)[0];
        EXPECT_NEAR(t, expected, 0.02 * expected) << what << ", oversubscription " << over;
        // Closed forms: 4/3 and 8/3 (m = 2), 8/7 and 16/7 (m = 4) of the time at o = 1.
        EXPECT_GT(t, 1.1 * full) << what << ", oversubscription " << over;
      }
    }
  }
}

// Pairwise all-to-all on TwoLeaves(2, o) (N = 4, leaves {0, 1} and {2, 3}): round k, member i
// sends S/N to i+k mod N after its previous round's send and receive.
//   Round 1: 0->1, 1->2, 2->3, 3->0: one cross flow per uplink direction (1->2, 3->0), at
//            min(B, U); every member sends or receives one of them, so every member starts
//            round 2 when they end (the in-leaf ones, faster and shorter, end before).
//   Round 2: 0->2, 1->3, 2->0, 3->1, all cross: two per uplink direction, min(B, U/2) each
//            (each NIC direction carries one flow).
//   Round 3: 0->3, 1->0, 2->1, 3->2: as round 1 (0->3 and 2->1 cross).
// Round 1 flows pay b + delta_net, later ones delta_net; each round's critical flow crosses
// the spine (alpha_x). With U = 2B/o <= B (o >= 2) the uplink is busy all along:
//   T = b + 3(delta_net + alpha_x) + (S/N)(1/U + 2/U + 1/U) = b + 3(delta_net + alpha_x) + S/U,
// bytes across the uplink over its bandwidth. With o = 1 (per-rail uplink 2B, min(B, U/2) = B)
// the NICs bound every round: b + 3(delta_net + alpha_x) + 3S/(4B).
// No pipelined edge: stream is step; both checked. (Larger N: rounds with no cross flow on a
// member let it run ahead into later rounds, and the closed form is no longer this simple.)
TEST(Contention, PairwiseAllToAllAcrossAnOversubscribedFatTreeIsLimitedByTheUplink) {
  const NvSwitchOptions o;
  const int n = 4;
  const double bytes = 1e9, nic = o.nic_Bps;
  const double head =
      Base("ring") + 3 * (NetStep("ring") + 2 * o.nic_latency_s + 3 * o.switch_latency_s);
  const Group g = AllToAll(n, bytes, "pairwise");
  for (Fidelity f : kStepAndStream) {
    const std::string what(ToString(f));
    const double full = Collectives(TwoLeaves(2, 1), {g}, f)[0];
    const double full_expected = head + (n - 1.0) * bytes / (n * nic);
    EXPECT_NEAR(full, full_expected, 0.02 * full_expected) << what;
    for (double over : {2.0, 4.0}) {
      const double expected = head + bytes / (2 * nic / over);
      const double t = Collectives(TwoLeaves(2, over), {g}, f)[0];
      EXPECT_NEAR(t, expected, 0.02 * expected) << what << ", oversubscription " << over;
      // Closed forms: 4/3 (o = 2) and 8/3 (o = 4) of the time at o = 1.
      EXPECT_GT(t, 1.3 * full) << what << ", oversubscription " << over;
    }
  }
}

}  // namespace
}  // namespace stratasim
