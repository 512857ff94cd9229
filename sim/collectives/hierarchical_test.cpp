#include "sim/collectives/hierarchical.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "core/error.h"
#include "sim/collectives/lowering.h"
#include "sim/collectives/test_util.h"

namespace stratasim::sim {
namespace {

using testing::InterServerSentBy;
using testing::Iota;
using testing::MakeCollective;
using testing::SentBy;

FlowProgram Lower(const Collective& c, const GroupView& v, Fidelity f = Fidelity::kStep) {
  return LowerCollective(c, v, CollectiveChoice{"hierarchical", "simple", 4}, f);
}

TEST(Hierarchical, AllReduceMovesOnlyItsShardAcrossServers) {
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(4, 8, 8), Iota(32));
  const double bytes = 32e6;
  const FlowProgram p = Lower(MakeCollective(CollectiveKind::kAllReduce, Iota(32), bytes), v);
  EXPECT_EQ(p.channels, 1);
  for (int m = 0; m < 32; ++m) {
    // 2(S-1)/S of the member's shard S/G over its NIC; 2(G-1)/G of the buffer inside.
    EXPECT_NEAR(InterServerSentBy(p, v, m), 2.0 * 3 / 4 * bytes / 8, 1e-6);
    EXPECT_NEAR(SentBy(p, m) - InterServerSentBy(p, v, m), 2.0 * 7 / 8 * bytes, 1e-6);
  }
  // Inter-server flows only join members of the same position (hence NIC).
  for (const Flow& f : p.flows) {
    if (v.members[f.src].server != v.members[f.dst].server) {
      EXPECT_EQ(v.members[f.src].local, v.members[f.dst].local);
    }
  }
  // Phases follow one another: no flow of the second phase starts without deps.
  int no_deps = 0;
  for (const Flow& f : p.flows) no_deps += f.deps.empty();
  EXPECT_EQ(no_deps, 32);  // the first intra step of each member
}

TEST(Hierarchical, ReduceScatterAndAllGatherVolumes) {
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(2, 4, 4), Iota(8));
  for (CollectiveKind k : {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
    const FlowProgram p = Lower(MakeCollective(k, Iota(8), 800), v);
    for (int m = 0; m < 8; ++m) {
      EXPECT_NEAR(InterServerSentBy(p, v, m), 1.0 / 2 * 800 / 4, 1e-9);
      EXPECT_NEAR(SentBy(p, m) - InterServerSentBy(p, v, m), 3.0 / 4 * 800, 1e-9);
    }
  }
}

TEST(Hierarchical, StreamKeepsBytesWithFewerFlows) {
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(4, 8, 8), Iota(32));
  const Collective c = MakeCollective(CollectiveKind::kAllReduce, Iota(32), 32e6);
  const FlowProgram step = Lower(c, v), stream = Lower(c, v, Fidelity::kStream);
  EXPECT_LT(stream.flows.size() * 4, step.flows.size());
  EXPECT_NEAR(testing::TotalBytes(stream), testing::TotalBytes(step), 1e-3);
}

TEST(Hierarchical, RejectsServersWithDifferentMemberCounts) {
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(2, 8, 8), Iota(12));
  try {
    Lower(MakeCollective(CollectiveKind::kAllReduce, Iota(12), 1e6), v);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "hierarchical all_reduce needs the same number of members on every server of "
                 "the group");
  }
}

// On a DGX-1 the part inside each server runs as four rings, each NVLink cycle both ways, each
// with a quarter of the data: every NVLink direction carries the same bytes, where one ring
// used 8 of the 32.
TEST(Hierarchical, DgxOneServerPartUsesEveryNvLinkBothWays) {
  const ClusterSpec c = testing::Dgx1Cluster(2, 4);
  const GroupView v = MakeGroupView(c, Iota(16));
  const double bytes = 64e6;
  const FlowProgram p = Lower(MakeCollective(CollectiveKind::kAllReduce, Iota(16), bytes), v);
  std::map<std::pair<int, int>, double> intra;  // bytes per directed member pair in a server
  for (const Flow& f : p.flows) {
    const GroupMember& a = v.members[f.src];
    const GroupMember& b = v.members[f.dst];
    if (a.server != b.server) continue;
    EXPECT_TRUE(testing::NvLinked(c, a.local, b.local)) << a.local << "-" << b.local;
    intra[{f.src, f.dst}] += f.bytes;
  }
  EXPECT_EQ(intra.size(), 2u * 16 * 2);  // 2 servers x 16 NVLinks x both ways
  for (const auto& [edge, b] : intra) {
    EXPECT_NEAR(b, 2.0 * 7 * bytes / 8 / 4, 1e-6);  // 2 phases x 7 steps x a quarter of S/8
  }
  for (int m = 0; m < 16; ++m) {
    EXPECT_NEAR(SentBy(p, m) - InterServerSentBy(p, v, m), 2.0 * 7 / 8 * bytes, 1e-6);
  }
}

}  // namespace
}  // namespace stratasim::sim
