#include "sim/collectives/protocol.h"

#include <gtest/gtest.h>

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
  EXPECT_DOUBLE_EQ(BaseLatencySeconds("ring", Protocol::kSimple), 8.4e-6);
  EXPECT_DOUBLE_EQ(BaseLatencySeconds("tree", Protocol::kLL), 4.4e-6);
  EXPECT_DOUBLE_EQ(StepLatencySeconds("ring", Protocol::kLL, HopKind::kNvLink), 0.47e-6);
  EXPECT_DOUBLE_EQ(StepLatencySeconds("direct", Protocol::kSimple, HopKind::kNet), 9.6e-6);
  EXPECT_DOUBLE_EQ(StepLatencySeconds("tree", Protocol::kLL128, HopKind::kPcie), 1.9e-6);
  EXPECT_DOUBLE_EQ(StepLatencySeconds("tree", Protocol::kSimple, HopKind::kNvLink), 6.2e-6);
  // Simple is the slowest per step, LL the fastest, on every hop.
  for (HopKind h : {HopKind::kNvLink, HopKind::kPcie, HopKind::kNet}) {
    EXPECT_LT(StepLatencySeconds("ring", Protocol::kLL, h),
              StepLatencySeconds("ring", Protocol::kSimple, h));
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
