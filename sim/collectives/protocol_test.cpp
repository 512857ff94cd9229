#include "sim/collectives/protocol.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "sim/collectives/lowering.h"
#include "sim/collectives/test_util.h"

namespace stratasim::sim {
namespace {

using testing::Iota;
using testing::MakeCollective;

TEST(Protocol, WireBytesFollowTheFlagOverhead) {
  EXPECT_DOUBLE_EQ(WireBytesFactor(Protocol::kLL), 2.0);
  EXPECT_DOUBLE_EQ(WireBytesFactor(Protocol::kLL128), 128.0 / 120);
  EXPECT_DOUBLE_EQ(WireBytesFactor(Protocol::kSimple), 1.0);
}

TEST(Protocol, LatenciesAreNcclsFigures) {
  EXPECT_DOUBLE_EQ(BaseLatencySeconds(NcclAlgorithm::kRing, Protocol::kSimple), 8.4e-6);
  EXPECT_DOUBLE_EQ(BaseLatencySeconds(NcclAlgorithm::kTree, Protocol::kLL), 4.4e-6);
  EXPECT_DOUBLE_EQ(StepLatencySeconds(NcclAlgorithm::kRing, Protocol::kLL, HopKind::kNvLink),
                   0.47e-6);
  EXPECT_DOUBLE_EQ(StepLatencySeconds(NcclAlgorithm::kRing, Protocol::kSimple, HopKind::kNet),
                   9.6e-6);
  EXPECT_DOUBLE_EQ(StepLatencySeconds(NcclAlgorithm::kTree, Protocol::kLL128, HopKind::kPcie),
                   1.9e-6);
  EXPECT_DOUBLE_EQ(StepLatencySeconds(NcclAlgorithm::kTree, Protocol::kSimple, HopKind::kNvLink),
                   6.2e-6);
  // Simple is the slowest per step, LL the fastest, on every hop.
  for (HopKind h : {HopKind::kNvLink, HopKind::kPcie, HopKind::kNet}) {
    EXPECT_LT(StepLatencySeconds(NcclAlgorithm::kRing, Protocol::kLL, h),
              StepLatencySeconds(NcclAlgorithm::kRing, Protocol::kSimple, h));
  }
}

TEST(Protocol, LoweringInflatesBytesAndSetsDelays) {
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(2, 2, 2), Iota(4));
  const Collective c = MakeCollective(CollectiveKind::kAllGather, Iota(4), 400);
  const FlowProgram ll =
      LowerCollective(c, v, CollectiveChoice{"direct", "ll", 1}, Fidelity::kStep);
  EXPECT_EQ(ll.protocol, "ll");
  for (const Flow& f : ll.flows) {
    EXPECT_DOUBLE_EQ(f.bytes, 200);
    const bool across = v.members[f.src].server != v.members[f.dst].server;
    EXPECT_DOUBLE_EQ(f.delay_s, (across ? 2.7e-6 : 0.47e-6) + 3.6e-6);
  }
  const FlowProgram ll128 =
      LowerCollective(c, v, CollectiveChoice{"direct", "ll128", 1}, Fidelity::kStep);
  EXPECT_DOUBLE_EQ(ll128.flows[0].bytes, 100 * 128.0 / 120);
}

TEST(Protocol, PerChannelRateBoundsAreNcclsCaps) {
  const double nvlink = 300e9;
  // Simple: no bound beyond the links.
  EXPECT_EQ(ProtocolMaxRateBps(Protocol::kSimple, NcclAlgorithm::kRing, CollectiveKind::kAllReduce,
                               true, nvlink),
            0);
  // LL128: ll128MaxBwPerCh of data per channel, in wire bytes; trees 7/9 of it.
  EXPECT_DOUBLE_EQ(ProtocolMaxRateBps(Protocol::kLL128, NcclAlgorithm::kRing,
                                      CollectiveKind::kAllReduce, false, nvlink),
                   16.7e9 * 128 / 120);
  EXPECT_DOUBLE_EQ(ProtocolMaxRateBps(Protocol::kLL128, NcclAlgorithm::kRing,
                                      CollectiveKind::kReduce, false, nvlink),
                   12.0e9 * 128 / 120);
  EXPECT_DOUBLE_EQ(ProtocolMaxRateBps(Protocol::kLL128, NcclAlgorithm::kTree,
                                      CollectiveKind::kAllReduce, true, nvlink),
                   16.7e9 * 7 / 9 * 128 / 120);
  // LL: a quarter of the hop in data (twice that on the wire) across servers or for
  // all-reduce, a third for an all-gather inside a server; trees 1/3.8.
  EXPECT_DOUBLE_EQ(ProtocolMaxRateBps(Protocol::kLL, NcclAlgorithm::kRing,
                                      CollectiveKind::kAllGather, true, 25e9),
                   12.5e9);
  EXPECT_DOUBLE_EQ(ProtocolMaxRateBps(Protocol::kLL, NcclAlgorithm::kRing,
                                      CollectiveKind::kAllGather, false, nvlink),
                   nvlink * 2 / 3);
  EXPECT_DOUBLE_EQ(ProtocolMaxRateBps(Protocol::kLL, NcclAlgorithm::kTree,
                                      CollectiveKind::kAllReduce, true, nvlink),
                   nvlink * 2 / 3.8);
}

TEST(Protocol, PredictionRunsEachChannelAtItsProtocolRate) {
  // One NVSwitch server (450 GB/s ports): LL128's 16.7 GB/s per channel, not the port, sets a
  // one-channel ring all-reduce's bandwidth term; Simple keeps the port's.
  const int n = 8;
  const double bytes = 1e9;
  const GroupView v = testing::FlatView(n);
  const Collective c = MakeCollective(CollectiveKind::kAllReduce, Iota(n), bytes);
  for (Protocol p : {Protocol::kSimple, Protocol::kLL128, Protocol::kLL}) {
    const std::string name(ProtocolName(p));
    const double bound =
        ProtocolMaxRateBps(p, NcclAlgorithm::kRing, CollectiveKind::kAllReduce, false, v.intra_Bps);
    const double rate = bound > 0 ? std::min(bound, v.intra_Bps) : v.intra_Bps;
    const double expected = BaseLatencySeconds(NcclAlgorithm::kRing, p) +
                            2.0 * (n - 1) *
                                (StepLatencySeconds(NcclAlgorithm::kRing, p, HopKind::kNvLink) +
                                 v.intra_latency_s + WireBytesFactor(p) * bytes / (n * rate));
    EXPECT_NEAR(PredictCollectiveSeconds(c, v, {"ring", name, 1}), expected, 1e-9 * expected)
        << name;
  }
}

TEST(Protocol, UnknownProtocolIsNamed) {
  try {
    ParseProtocol("fast");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown collective protocol 'fast' (known: ll, ll128, simple)");
  }
}

}  // namespace
}  // namespace stratasim::sim
