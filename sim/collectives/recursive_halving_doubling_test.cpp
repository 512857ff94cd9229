#include "sim/collectives/recursive_halving_doubling.h"

#include <gtest/gtest.h>

#include "sim/collectives/lowering.h"
#include "sim/collectives/test_util.h"

namespace stratasim::sim {
namespace {

using testing::Iota;
using testing::MakeCollective;
using testing::SentBy;

FlowProgram Lower(int n, double bytes, Fidelity f = Fidelity::kStep) {
  return LowerCollective(MakeCollective(CollectiveKind::kAllReduce, Iota(n), bytes),
                         testing::FlatView(n),
                         CollectiveChoice{"recursive_halving_doubling", "simple", 1}, f);
}

TEST(RecursiveHalvingDoubling, PowerOfTwoSendsTwiceNMinusOneOverN) {
  const FlowProgram p = Lower(8, 800);
  EXPECT_EQ(p.flows.size(), 2u * 3 * 8);  // 3 halving + 3 doubling steps, 8 flows each
  for (int m = 0; m < 8; ++m) EXPECT_DOUBLE_EQ(SentBy(p, m), 2.0 * 7 / 8 * 800);
  // First step: partners at distance 4 exchange half the buffer.
  EXPECT_EQ(p.flows[0].src, 0);
  EXPECT_EQ(p.flows[0].dst, 4);
  EXPECT_DOUBLE_EQ(p.flows[0].bytes, 400);
}

TEST(RecursiveHalvingDoubling, SixMembersFoldTwoFirst) {
  // p = 4, r = 2: 0 -> 1 and 2 -> 3 fold; 1, 3, 4, 5 run Rabenseifner; 1 -> 0, 3 -> 2 unfold.
  const FlowProgram p = Lower(6, 1000);
  EXPECT_EQ(p.flows.size(), 2u + 4 * 4 + 2);
  EXPECT_DOUBLE_EQ(SentBy(p, 0), 1000);
  EXPECT_DOUBLE_EQ(SentBy(p, 1), 1.5 * 1000 + 1000);
  EXPECT_DOUBLE_EQ(SentBy(p, 4), 1.5 * 1000);
  EXPECT_DOUBLE_EQ(testing::ReceivedBy(p, 2), 1000);
  // The unfold waits for member 3's last exchange.
  const Flow& unfold = p.flows.back();
  EXPECT_EQ(unfold.src, 3);
  EXPECT_EQ(unfold.dst, 2);
  EXPECT_FALSE(unfold.deps.empty());
  // Not pipelined: stream is the same program.
  EXPECT_EQ(Lower(6, 1000, Fidelity::kStream).flows.size(), p.flows.size());
}

TEST(RecursiveHalvingDoubling, StepsWaitForBothPartnersPreviousStep) {
  const FlowProgram p = Lower(4, 400);
  // Step 0: (0,2) flows 0,1 and (1,3) flows 2,3. Step 1: 0 <-> 1 waits on flows 0-3.
  EXPECT_EQ(p.flows[4].src, 0);
  EXPECT_EQ(p.flows[4].dst, 1);
  EXPECT_EQ(p.flows[4].deps, (std::vector<int>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace stratasim::sim
