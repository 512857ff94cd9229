#include "sim/collectives/tuner.h"

#include <gtest/gtest.h>

#include <functional>

#include "core/error.h"
#include "sim/collectives/lowering.h"
#include "sim/collectives/registry.h"
#include "sim/collectives/test_util.h"

namespace stratasim::sim {
namespace {

using testing::Iota;
using testing::MakeCollective;

// 8 servers x 8 GPUs on NVSwitch, one 400 Gb/s NIC per GPU.
GroupView EightByEight() { return MakeGroupView(testing::NvSwitchCluster(8, 8, 8), Iota(64)); }

// Direct flows inside a PCIe tree share the switches' uplinks and the socket link. On a DGX-1
// (2 GPUs per switch, 2 sockets, 19.2 GB/s between them) a reduce-scatter of S sends S/8 from
// each of the 4 GPUs of one socket to each of the 4 of the other: 2S across the socket link
// one way, minus the 4 pairs joined by NVLink (0-4, 1-5, 2-6, 3-7): 1.5 S. So direct costs at
// least 1.5 S / 19.2 GB/s and, at 1 GiB, loses to the ring that follows NVLink.
TEST(Tuner, DirectInsideAPcieTreePaysTheSharedLinks) {
  const GroupView v = MakeGroupView(testing::Dgx1Cluster(1, 4), Iota(8));
  const Collective c = MakeCollective(CollectiveKind::kReduceScatter, Iota(8), 1 << 30);
  const double direct = PredictCollectiveSeconds(c, v, CollectiveChoice{"direct", "simple", 1});
  EXPECT_GT(direct, 1.5 * (1 << 30) / 19.2e9);
  EXPECT_EQ(ChooseCollective(c, v, {}).algorithm, "ring");
}

TEST(Tuner, TreeOrDirectForSmallAllReduceAcrossServers) {
  const CollectiveChoice c = ChooseCollective(
      MakeCollective(CollectiveKind::kAllReduce, Iota(64), 1024), EightByEight(), {});
  EXPECT_TRUE(c.algorithm == "tree" || c.algorithm == "direct") << c.algorithm;
  EXPECT_NE(c.protocol, "simple");
}

TEST(Tuner, RingOrHierarchicalForLargeAllReduceAcrossServers) {
  const CollectiveChoice c = ChooseCollective(
      MakeCollective(CollectiveKind::kAllReduce, Iota(64), 1 << 30), EightByEight(), {});
  EXPECT_TRUE(c.algorithm == "ring" || c.algorithm == "hierarchical") << c.algorithm;
  EXPECT_NE(c.protocol, "ll");  // twice the bytes never pays at 1 GiB
  if (c.algorithm == "ring") {
    EXPECT_EQ(c.channels, 8);  // one per NIC
  }
}

TEST(Tuner, LargeMessagesUseSimpleSmallOnesLlOrLl128) {
  // With LL128 bounded at 16.7 GB/s of data per channel, 8 channels cannot fill 8 x 50 GB/s of
  // NICs: NCCL's choice of Simple for large messages; LL or LL128 keep the small ones.
  const GroupView v = EightByEight();
  const CollectiveChoice large =
      ChooseCollective(MakeCollective(CollectiveKind::kAllReduce, Iota(64), 1 << 30), v, {});
  EXPECT_EQ(large.protocol, "simple");
  const Collective ring = MakeCollective(CollectiveKind::kAllReduce, Iota(64), 1 << 30);
  EXPECT_LT(PredictCollectiveSeconds(ring, v, {"ring", "simple", 8}),
            PredictCollectiveSeconds(ring, v, {"ring", "ll128", 8}));
  const CollectiveChoice small =
      ChooseCollective(MakeCollective(CollectiveKind::kAllReduce, Iota(64), 4096), v, {});
  EXPECT_NE(small.protocol, "simple");
}

TEST(Tuner, InsideOneServerSmallIsDirectOrTreeLargeIsRing) {
  const GroupView v = testing::FlatView(8);
  const CollectiveChoice small =
      ChooseCollective(MakeCollective(CollectiveKind::kAllReduce, Iota(8), 256), v, {});
  EXPECT_TRUE(small.algorithm == "tree" || small.algorithm == "direct") << small.algorithm;
  const CollectiveChoice large =
      ChooseCollective(MakeCollective(CollectiveKind::kAllReduce, Iota(8), 1 << 30), v, {});
  EXPECT_EQ(large.algorithm, "ring");
  EXPECT_EQ(large.channels, 1);
}

TEST(Tuner, HierarchicalBeatsFlatRingWhenNicsAreScarce) {
  // One NIC per 8-GPU server: a flat ring pushes 2(N-1)/N S through it; hierarchical S/4.
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(4, 8, 1), Iota(32));
  const Collective c = MakeCollective(CollectiveKind::kAllReduce, Iota(32), 1 << 30);
  EXPECT_LT(PredictCollectiveSeconds(c, v, {"hierarchical", "simple", 1}),
            PredictCollectiveSeconds(c, v, {"ring", "simple", 1}));
  EXPECT_EQ(ChooseCollective(c, v, {}).algorithm, "hierarchical");
}

TEST(Tuner, PredictionGrowsWithSizeAndRingBandwidthTermIsExact) {
  const GroupView v = testing::FlatView(4);
  const Collective c = MakeCollective(CollectiveKind::kAllReduce, Iota(4), 4e9);
  const double t = PredictCollectiveSeconds(c, v, {"ring", "simple", 1});
  // base + 6 steps x (route + step latency + S/N / B)
  EXPECT_NEAR(t, 8.4e-6 + 6 * (2e-6 + 3.4e-6 + 1e9 / 450e9), 1e-12);
}

// Along the cube mesh's two NVLink cycles, C channels of a ring leave each GPU over
// min(C, 4) NVLinks (ChannelRing): inside one DGX-1 (25 GB/s NVLinks), a 1 GiB ring all-reduce
// moves 2 x 7/8 S out of each GPU over 1 NVLink with 1 channel, 2 with 2, 4 with 4 or 8.
TEST(Tuner, RingsOnNvLinkCyclesCountTheNvLinksTheyUse) {
  const GroupView v = MakeGroupView(testing::Dgx1Cluster(1, 4), Iota(8));
  const Collective c = MakeCollective(CollectiveKind::kAllReduce, Iota(8), 1 << 30);
  auto wire_s = [&](int channels) {
    const CollectiveChoice ring{"ring", "simple", channels};
    // Latency terms are the same for every channel count: remove them with a 0-byte twin.
    const Collective empty = MakeCollective(CollectiveKind::kAllReduce, Iota(8), 0);
    return PredictCollectiveSeconds(c, v, ring) - PredictCollectiveSeconds(empty, v, ring);
  };
  const double one_link_s = 2.0 * 7 / 8 * (1 << 30) / 25e9;
  EXPECT_NEAR(wire_s(1), one_link_s, 1e-9);
  EXPECT_NEAR(wire_s(2), one_link_s / 2, 1e-9);
  EXPECT_NEAR(wire_s(4), one_link_s / 4, 1e-9);
  EXPECT_NEAR(wire_s(8), one_link_s / 4, 1e-9);
  EXPECT_EQ(ChooseCollective(c, v, {}).channels, 4);
}

// A tree all-reduce's chains on a DGX-1: instance i (of 2C) on NVLink cycle i mod 2, each
// carrying S/(2C) up one way and down the other, so the busiest NVLink direction carries S/2
// whatever C (on one NVSwitch port a GPU would send 2S). Beyond the 0-byte twin, the
// prediction adds just that: later chunks' route latencies overlap the transfers behind them.
TEST(Tuner, TreeChainsOnNvLinkCyclesCountTheNvLinksTheyUse) {
  const GroupView v = MakeGroupView(testing::Dgx1Cluster(1, 4), Iota(8));
  const double bytes = 1 << 30;
  const Collective c = MakeCollective(CollectiveKind::kAllReduce, Iota(8), bytes);
  const Collective empty = MakeCollective(CollectiveKind::kAllReduce, Iota(8), 0);
  for (int channels : {1, 2, 4}) {
    const CollectiveChoice tree{"tree", "simple", channels};
    const double extra_s =
        PredictCollectiveSeconds(c, v, tree) - PredictCollectiveSeconds(empty, v, tree);
    EXPECT_NEAR(extra_s, bytes / 2 / 25e9, 1e-9) << channels;
  }
}

// A tree broadcast across PCIe boxes: the chains and the way to the NIC share each GPU's PCIe
// link, which carries 3 S/C for the channel the GPU heads and S/C for each other one: with 4
// GPUs and 4 channels, 1.5 S; the chain moves S over it, and wins at 1 GiB.
TEST(Tuner, TreeHeadsOnPcieShareTheirLinkWithTheNic) {
  ClusterSpec cluster;
  cluster.groups.push_back(stratasim::testing::CommodityPcieGroup("box", 4, false, 4));
  const GroupView v = MakeGroupView(cluster, Iota(16));
  const Collective c = MakeCollective(CollectiveKind::kBroadcast, Iota(16), 1 << 30);
  const double tree = PredictCollectiveSeconds(c, v, {"tree", "simple", 4});
  const double gpu_link_Bps = v.ring_intra_Bps;
  EXPECT_GT(tree, 1.5 * (1 << 30) / gpu_link_Bps);
  EXPECT_LT(tree, 1.5 * (1 << 30) / gpu_link_Bps * 1.01);
  EXPECT_EQ(ChooseCollective(c, v, {}).algorithm, "ring");
}

TEST(Tuner, AutoLeavesOutAlgorithmsNcclDoesNotRun) {
  const Collective c = MakeCollective(CollectiveKind::kAllToAll, Iota(8), 1 << 20);
  EXPECT_EQ(ChooseCollective(c, testing::FlatView(8), {}).algorithm, "direct");
  EXPECT_FALSE(collective_algorithms::recursive_halving_doubling.chosen_by_auto);
  EXPECT_FALSE(collective_algorithms::pairwise.chosen_by_auto);
  EXPECT_TRUE(collective_algorithms::hierarchical.chosen_by_auto);
}

TEST(Tuner, OverridesAreObeyedInOrder) {
  const GroupView v = EightByEight();
  Collective c = MakeCollective(CollectiveKind::kAllReduce, Iota(64), 1 << 30);
  CollectiveSettings s;
  s.algorithm[CollectiveKind::kAllReduce] = "recursive_halving_doubling";
  EXPECT_EQ(ChooseCollective(c, v, s).algorithm, "recursive_halving_doubling");
  c.algorithm = "tree";  // the collective's hint beats the scenario
  EXPECT_EQ(ChooseCollective(c, v, s).algorithm, "tree");
  s.protocol = "ll";
  s.channels = 3;
  const CollectiveChoice chosen = ChooseCollective(c, v, s);
  EXPECT_EQ(chosen.protocol, "ll");
  EXPECT_EQ(chosen.channels, 3);
  c.algorithm = "direct";  // an algorithm without channels reports 1
  EXPECT_EQ(ChooseCollective(c, v, s).channels, 1);
}

TEST(Tuner, AutoChannels) {
  EXPECT_EQ(AutoChannels(EightByEight()), 8);
  EXPECT_EQ(AutoChannels(testing::FlatView(8)), 1);
  EXPECT_EQ(AutoChannels(MakeGroupView(testing::NvSwitchCluster(2, 8, 8), {0, 1, 8, 9})), 2);
  // Two channels per NVLink cycle, one each way: 4 on DGX-1s, even with one NIC each.
  EXPECT_EQ(AutoChannels(MakeGroupView(testing::Dgx1Cluster(2, 1), Iota(16))), 4);
  EXPECT_EQ(AutoChannels(MakeGroupView(testing::Dgx1Cluster(2, 8), Iota(16))), 8);
}

TEST(Tuner, AllToAllVPredictionUsesTheMatrix) {
  const GroupView v = testing::FlatView(2);
  Collective c = MakeCollective(CollectiveKind::kAllToAllV, Iota(2), 0);
  c.matrix = {0, 450e9, 0, 0};  // one second on the 450 GB/s port
  EXPECT_NEAR(PredictCollectiveSeconds(c, v, {"direct", "simple", 1}), 1.0, 1e-3);
}

void ExpectError(const std::function<void()>& f, const std::string& message) {
  try {
    f();
    FAIL() << "expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(Tuner, BadChoicesAreNamed) {
  const GroupView v = testing::FlatView(4);
  Collective c = MakeCollective(CollectiveKind::kAllReduce, Iota(4), 100, "bogus");
  ExpectError([&] { ChooseCollective(c, v, {}); },
              "collective all_reduce has no algorithm 'bogus' (known: auto, ring, tree, "
              "recursive_halving_doubling, hierarchical, direct)");
  c.algorithm = "auto";
  CollectiveSettings s;
  s.algorithm[CollectiveKind::kAllReduce] = "pairwise";
  ExpectError([&] { ChooseCollective(c, v, s); },
              "collective all_reduce has no algorithm 'pairwise' (known: auto, ring, tree, "
              "recursive_halving_doubling, hierarchical, direct)");
  s = {};
  s.protocol = "fast";
  ExpectError([&] { ChooseCollective(c, v, s); },
              "unknown collective protocol 'fast' (known: ll, ll128, simple)");
  s = {};
  s.channels = -1;
  ExpectError([&] { ChooseCollective(c, v, s); },
              "collective channels must be 0 (auto) to 16, got -1");
  ExpectError(
      [&] {
        PredictCollectiveSeconds(c, v, {"auto", "simple", 1});
      },
      "collective all_reduce has no algorithm 'auto' (known: ring, tree, "
      "recursive_halving_doubling, hierarchical, direct)");
}

}  // namespace
}  // namespace stratasim::sim
