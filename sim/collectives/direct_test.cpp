#include "sim/collectives/direct.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "sim/collectives/lowering.h"
#include "sim/collectives/test_util.h"

namespace stratasim::sim {
namespace {

using testing::FlatView;
using testing::Iota;
using testing::MakeCollective;
using testing::ReceivedBy;
using testing::SentBy;

FlowProgram Lower(const Collective& c, const std::string& algorithm = "direct") {
  return LowerCollective(c, FlatView(static_cast<int>(c.ranks.size())),
                         CollectiveChoice{algorithm, "simple", 1}, Fidelity::kStep);
}

TEST(Direct, OneShotAllReduceSendsTheWholeBufferToEveryOther) {
  const FlowProgram p = Lower(MakeCollective(CollectiveKind::kAllReduce, Iota(4), 100));
  EXPECT_EQ(p.flows.size(), 12u);
  for (int m = 0; m < 4; ++m) EXPECT_DOUBLE_EQ(SentBy(p, m), 300);
  for (const Flow& f : p.flows) EXPECT_TRUE(f.deps.empty());
}

TEST(Direct, ScatterGatherKindsMoveOneBlockPerPair) {
  for (CollectiveKind k :
       {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather, CollectiveKind::kAllToAll}) {
    const FlowProgram p = Lower(MakeCollective(k, Iota(4), 400));
    EXPECT_EQ(p.flows.size(), 12u);
    EXPECT_DOUBLE_EQ(SentBy(p, 1), 300);
    EXPECT_DOUBLE_EQ(ReceivedBy(p, 1), 300);
  }
}

TEST(Direct, GatherAndScatterGoThroughTheRoot) {
  Collective g = MakeCollective(CollectiveKind::kGather, Iota(4), 400);
  g.root = 2;
  const FlowProgram pg = Lower(g);
  EXPECT_EQ(pg.flows.size(), 3u);
  EXPECT_DOUBLE_EQ(ReceivedBy(pg, 2), 300);
  Collective s = g;
  s.kind = CollectiveKind::kScatter;
  const FlowProgram ps = Lower(s);
  EXPECT_DOUBLE_EQ(SentBy(ps, 2), 300);
  EXPECT_DOUBLE_EQ(ReceivedBy(ps, 0), 100);
}

TEST(Direct, AllToAllVFollowsTheMatrixAndSkipsZeros) {
  Collective c = MakeCollective(CollectiveKind::kAllToAllV, Iota(3), 0);
  c.matrix = {0, 5,  0,  //
              7, 0,  9,  //
              0, 11, 0};
  for (const char* algorithm : {"direct", "pairwise"}) {
    const FlowProgram p = Lower(c, algorithm);
    EXPECT_EQ(p.flows.size(), 4u) << algorithm;
    EXPECT_DOUBLE_EQ(testing::EdgeBytes(p, 1, 2), 9) << algorithm;
    EXPECT_DOUBLE_EQ(ReceivedBy(p, 1), 16) << algorithm;
  }
}

TEST(Direct, AllToAllVRejectsAMatrixOfTheWrongSize) {
  Collective c = MakeCollective(CollectiveKind::kAllToAllV, Iota(3), 0);
  c.matrix = {1, 2, 3, 4};
  try {
    Lower(c);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "all_to_all_v of 3 members needs a 3x3 size matrix, got 4 entries");
  }
}

}  // namespace
}  // namespace stratasim::sim
