#include "sim/collectives/ring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "sim/collectives/lowering.h"
#include "sim/collectives/member_order.h"
#include "sim/collectives/protocol.h"
#include "sim/collectives/test_util.h"
#include "sim/collectives/tuner.h"

namespace stratasim::sim {
namespace {

using testing::EdgeBytes;
using testing::FlatView;
using testing::Iota;
using testing::MakeCollective;
using testing::SentBy;

FlowProgram Lower(const Collective& c, const GroupView& v, int channels = 1,
                  Fidelity f = Fidelity::kStep) {
  return LowerCollective(c, v, CollectiveChoice{"ring", "simple", channels}, f);
}

TEST(Ring, AllReduceSendsTwiceNMinusOneOverNOfTheBuffer) {
  const FlowProgram p =
      Lower(MakeCollective(CollectiveKind::kAllReduce, Iota(4), 400), FlatView(4));
  EXPECT_EQ(p.flows.size(), 2u * 3 * 4);
  for (int m = 0; m < 4; ++m) EXPECT_DOUBLE_EQ(SentBy(p, m), 2.0 * 3 / 4 * 400);
  for (const Flow& f : p.flows) EXPECT_EQ(f.dst, (f.src + 1) % 4);
  // Step 1 of member 2 waits for step 0 of member 1 (the data it forwards).
  EXPECT_EQ(p.flows[4 + 2].deps, (std::vector<int>{1}));
  EXPECT_EQ(p.algorithm, "ring");
  EXPECT_EQ(p.protocol, "simple");
}

TEST(Ring, AnEdgeRunsAtMostEightStepsAhead) {
  const FlowProgram p = Lower(MakeCollective(CollectiveKind::kAllReduce, Iota(4), 4e3),
                              FlatView(4));  // 6 steps: no slot dependency yet
  for (const Flow& f : p.flows) EXPECT_LE(f.deps.size(), 1u);
  const FlowProgram q = Lower(MakeCollective(CollectiveKind::kAllReduce, Iota(8), 8e3),
                              FlatView(8));  // 14 steps
  // Step 8 of member 3 waits for step 7 of member 2 and for its own step 0 (slot reuse).
  EXPECT_EQ(q.flows[8 * 8 + 3].deps, (std::vector<int>{7 * 8 + 2, 3}));
}

TEST(Ring, FirstStepPaysTheBaseLatencyEveryStepItsStepLatency) {
  const FlowProgram p =
      Lower(MakeCollective(CollectiveKind::kAllReduce, Iota(4), 400), FlatView(4));
  const double step = StepLatencySeconds(NcclAlgorithm::kRing, Protocol::kSimple, HopKind::kNvLink);
  const double base = BaseLatencySeconds(NcclAlgorithm::kRing, Protocol::kSimple);
  EXPECT_DOUBLE_EQ(p.flows[0].delay_s, base + step);
  EXPECT_DOUBLE_EQ(p.flows[5].delay_s, step);
}

TEST(Ring, ReduceScatterAndAllGatherAreHalfRings) {
  for (CollectiveKind k : {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
    const FlowProgram p = Lower(MakeCollective(k, Iota(8), 800), FlatView(8));
    EXPECT_EQ(p.flows.size(), 7u * 8);
    EXPECT_DOUBLE_EQ(SentBy(p, 3), 7 * 100.0);
  }
}

TEST(Ring, BroadcastChainsChunksFromTheRoot) {
  Collective c = MakeCollective(CollectiveKind::kBroadcast, Iota(4), 4 * kPipelineChunkBytes);
  c.root = 2;
  const FlowProgram p = Lower(c, FlatView(4));
  EXPECT_EQ(p.flows.size(), 4u * 3);  // 4 chunks over 3 hops
  EXPECT_EQ(p.flows[0].src, 2);
  EXPECT_EQ(p.flows[0].dst, 3);
  EXPECT_EQ(p.flows[2].dst, 1);
  EXPECT_DOUBLE_EQ(testing::ReceivedBy(p, 2), 0);
  // Chunk 1 on hop 1 waits for chunk 1 on hop 0 and chunk 0 on hop 1; it pays no step latency.
  EXPECT_EQ(p.flows[4].deps, (std::vector<int>{3, 1}));
  EXPECT_DOUBLE_EQ(p.flows[4].delay_s, 0);
}

TEST(Ring, ReduceChainsTowardsTheRoot) {
  Collective c = MakeCollective(CollectiveKind::kReduce, Iota(4), 1000);
  c.root = 1;
  const FlowProgram p = Lower(c, FlatView(4));
  ASSERT_EQ(p.flows.size(), 3u);
  EXPECT_EQ(p.flows[0].src, 2);
  EXPECT_EQ(p.flows[2].dst, 1);
  EXPECT_DOUBLE_EQ(SentBy(p, 1), 0);
}

TEST(Ring, StreamIsOneFlowPerEdgeWithTheSameBytesAndTheLatencyTerms) {
  const Collective c = MakeCollective(CollectiveKind::kAllReduce, Iota(8), 8e6);
  const FlowProgram step = Lower(c, FlatView(8));
  const FlowProgram stream = Lower(c, FlatView(8), 1, Fidelity::kStream);
  ASSERT_EQ(stream.flows.size(), 8u);
  EXPECT_EQ(step.flows.size(), 8u * 14);
  for (const Flow& f : stream.flows) {
    EXPECT_DOUBLE_EQ(f.bytes, EdgeBytes(step, f.src, f.dst));
    EXPECT_EQ(f.extra_route_latencies, 13);
    EXPECT_TRUE(f.deps.empty());
    EXPECT_DOUBLE_EQ(f.delay_s, BaseLatencySeconds(NcclAlgorithm::kRing, Protocol::kSimple) +
                                    14 * StepLatencySeconds(NcclAlgorithm::kRing, Protocol::kSimple,
                                                            HopKind::kNvLink));
  }
}

TEST(Ring, StreamFlowsOfOneRingShareALatencyGroupStepFlowsHaveNone) {
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(2, 8, 8), Iota(16));
  const Collective c = MakeCollective(CollectiveKind::kAllReduce, Iota(16), 16e6);
  for (const Flow& f : Lower(c, v, 2).flows) EXPECT_EQ(f.latency_group, -1);
  // Two channels: two rings, two groups of 16 edges each (channels are not merged across
  // groups, so each group's mean latency is over its own ring).
  std::map<int, int> edges_per_group;
  for (const Flow& f : Lower(c, v, 2, Fidelity::kStream).flows) ++edges_per_group[f.latency_group];
  EXPECT_EQ(edges_per_group, (std::map<int, int>{{0, 16}, {1, 16}}));
}

// NICs through which the inter-server flows leave server 0.
std::set<int> LeavingNics(const FlowProgram& p, const GroupView& v) {
  std::set<int> nics;
  for (const Flow& f : p.flows) {
    if (v.members[f.src].server == 0 && v.members[f.dst].server != 0) {
      nics.insert(v.members[f.src].nic);
    }
  }
  return nics;
}

TEST(Ring, ChannelsLeaveEachServerThroughDifferentNics) {
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(2, 8, 8), Iota(16));
  const Collective c = MakeCollective(CollectiveKind::kAllReduce, Iota(16), 16e6);
  EXPECT_EQ(LeavingNics(Lower(c, v, 1), v).size(), 1u);
  EXPECT_EQ(LeavingNics(Lower(c, v, 8), v).size(), 8u);
  const GroupView four = MakeGroupView(testing::NvSwitchCluster(2, 8, 4), Iota(16));
  EXPECT_EQ(LeavingNics(Lower(c, four, 4), four).size(), 4u);
  // Each channel carries its share: every member still sends 2(N-1)/N of the buffer.
  const FlowProgram p = Lower(c, v, 8);
  EXPECT_EQ(p.channels, 8);
  for (int m = 0; m < 16; ++m) EXPECT_NEAR(SentBy(p, m), 2.0 * 15 / 16 * 16e6, 1e-3);
}

// The directed NVLink hops inside servers of each channel's ring, checking that every hop
// between two GPUs of a server is an NVLink.
std::vector<std::set<std::pair<int, int>>> NvLinkHopsPerChannel(const ClusterSpec& c,
                                                                const GroupView& v, int channels) {
  const int n = static_cast<int>(v.members.size());
  std::vector<std::set<std::pair<int, int>>> directed(channels);
  for (int ch = 0; ch < channels; ++ch) {
    const std::vector<int> ring = ChannelRing(v, ch, channels);
    for (int i = 0; i < n; ++i) {
      const GroupMember& a = v.members[ring[i]];
      const GroupMember& b = v.members[ring[(i + 1) % n]];
      if (a.server != b.server) continue;
      EXPECT_TRUE(testing::NvLinked(c, a.local, b.local))
          << "channel " << ch << ": " << a.local << "-" << b.local;
      directed[ch].insert({ring[i], ring[(i + 1) % n]});
    }
  }
  return directed;
}

// On a DGX-1 every hop inside a server is an NVLink. The cube mesh (4 NVLinks per GPU here)
// holds two edge-disjoint NVLink cycles: channels 0 and 1 walk the first both ways, 2 and 3
// the second, so the four use no NVLink direction in common, each 7 of its cycle's 8 (the
// eighth hop leaves the server), as NCCL's four DGX-1 rings do; and the channels still leave
// each server through different NICs. Auto gives such servers 4 channels even with one NIC.
TEST(Ring, DgxOneRingsUseEveryNvLinkBothWaysAndStripeNics) {
  const ClusterSpec c = testing::Dgx1Cluster(4, 4);
  const GroupView v = MakeGroupView(c, Iota(32));
  EXPECT_EQ(v.nvlink_cycles, 2);
  const auto directed = NvLinkHopsPerChannel(c, v, 4);
  std::set<std::pair<int, int>> all;
  for (int ch = 0; ch < 4; ++ch) {
    for (int other = ch + 1; other < 4; ++other) {
      for (const auto& edge : directed[ch]) EXPECT_EQ(directed[other].count(edge), 0u);
    }
    all.insert(directed[ch].begin(), directed[ch].end());
  }
  EXPECT_EQ(all.size(), 4u * 4 * 7);  // 4 servers x 4 channels x 7 NVLink hops
  const Collective col = MakeCollective(CollectiveKind::kAllReduce, Iota(32), 16e6);
  EXPECT_EQ(LeavingNics(Lower(col, v, 4), v).size(), 4u);
  EXPECT_EQ(AutoChannels(MakeGroupView(testing::Dgx1Cluster(4, 1), Iota(32))), 4);
  EXPECT_EQ(AutoChannels(MakeGroupView(testing::Dgx1Cluster(1, 1), Iota(8))), 4);
}

// The same on a rail-optimized fabric, where rings also keep every hop between servers on one
// rail: with a NIC per GPU, 8 channels (two per cycle and direction) use every NVLink both
// ways, none by more than two channels (before, every channel walked a server the same way
// and each NVLink carried four one way, none the other).
TEST(Ring, DgxOneRailOptimizedRingsUseEveryNvLinkBothWays) {
  for (int servers : {2, 4}) {
    ClusterSpec c = testing::Dgx1Cluster(servers, 8);
    c.network.kind = NetworkKind::kRailOptimized;
    const GroupView v = MakeGroupView(c, Iota(8 * servers));
    std::map<std::pair<int, int>, int> uses;
    for (const auto& hops : NvLinkHopsPerChannel(c, v, 8)) {
      for (const auto& edge : hops) ++uses[edge];
    }
    EXPECT_EQ(uses.size(), servers * 16u * 2) << servers << " servers";
    int hops = 0;
    for (const auto& [edge, count] : uses) {
      EXPECT_LE(count, 2) << servers << " servers";
      hops += count;
    }
    EXPECT_EQ(hops, servers * 8 * 7) << servers << " servers";
  }
}

// On a rail-optimized fabric every hop between servers stays on one rail (both ends on the
// same NIC index), as NCCL's rings do, and the channels still leave each server through
// different NICs; with an odd number of servers too. Elsewhere a hop may change rails.
TEST(Ring, RailOptimizedRingsKeepEachHopBetweenServersOnOneRail) {
  for (int servers : {2, 3, 4}) {
    ClusterSpec cluster = testing::NvSwitchCluster(servers, 8, 8);
    cluster.network.kind = NetworkKind::kRailOptimized;
    const int n = servers * 8;
    const GroupView v = MakeGroupView(cluster, Iota(n));
    for (int ch = 0; ch < 8; ++ch) {
      const std::vector<int> ring = ChannelRing(v, ch, 8);
      std::vector<int> sorted = ring;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(sorted, Iota(n)) << servers << " servers, channel " << ch;
      for (int i = 0; i < n; ++i) {
        const GroupMember& a = v.members[ring[i]];
        const GroupMember& b = v.members[ring[(i + 1) % n]];
        if (a.server != b.server) {
          EXPECT_EQ(a.nic, b.nic) << servers << " servers, channel " << ch << ", hop " << i;
        }
      }
    }
    const Collective c = MakeCollective(CollectiveKind::kAllReduce, Iota(n), 16e6);
    EXPECT_EQ(LeavingNics(Lower(c, v, 8), v).size(), 8u) << servers << " servers";
  }
  // A single switch keeps the plain rotation: channel 1 leaves server 0 from GPU 0 to GPU 1.
  const GroupView flat = MakeGroupView(testing::NvSwitchCluster(2, 8, 8), Iota(16));
  const std::vector<int> ring = ChannelRing(flat, 1, 8);
  EXPECT_EQ(ring[7], 0);
  EXPECT_EQ(ring[8], 9);
}

}  // namespace
}  // namespace stratasim::sim
