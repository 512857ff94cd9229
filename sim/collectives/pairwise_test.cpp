#include "sim/collectives/pairwise.h"

#include <gtest/gtest.h>

#include "sim/collectives/lowering.h"
#include "sim/collectives/test_util.h"

namespace stratasim::sim {
namespace {

using testing::Iota;
using testing::MakeCollective;

TEST(Pairwise, AllToAllRunsNMinusOneRoundsEachAfterTheMembersPreviousOne) {
  const Collective c = MakeCollective(CollectiveKind::kAllToAll, Iota(4), 400);
  const FlowProgram p = LowerCollective(c, testing::FlatView(4),
                                        CollectiveChoice{"pairwise", "simple", 1}, Fidelity::kStep);
  ASSERT_EQ(p.flows.size(), 12u);
  for (int m = 0; m < 4; ++m) EXPECT_DOUBLE_EQ(testing::SentBy(p, m), 300);
  // Round 1 (flows 0-3): i -> i+1; round 2 (flows 4-7): i -> i+2.
  EXPECT_EQ(p.flows[4].src, 0);
  EXPECT_EQ(p.flows[4].dst, 2);
  // Member 0's round-2 send waits for its round-1 send (0->1, flow 0) and receive (3->0, 3).
  EXPECT_EQ(p.flows[4].deps, (std::vector<int>{0, 3}));
  for (int f = 0; f < 4; ++f) EXPECT_TRUE(p.flows[f].deps.empty());
  // Nothing is pipelined: stream lowers as step.
  const FlowProgram s = LowerCollective(
      c, testing::FlatView(4), CollectiveChoice{"pairwise", "simple", 1}, Fidelity::kStream);
  EXPECT_EQ(s.flows.size(), p.flows.size());
}

}  // namespace
}  // namespace stratasim::sim
