#include "sim/collective_lowering.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim::sim {
namespace {

Collective Make(CollectiveKind k, int n, double bytes, const std::string& algo = "auto") {
  Collective c;
  c.kind = k;
  for (int i = 0; i < n; ++i) c.ranks.push_back(10 + i);
  c.root = 10;
  c.bytes = bytes;
  c.algorithm = algo;
  return c;
}

double Sent(const FlowProgram& p, int member) {
  double s = 0;
  for (const Flow& f : p.flows) s += f.src == member ? f.bytes : 0;
  return s;
}

TEST(Lowering, RingAllReduceSendsTwiceNMinusOneOverNOfTheBuffer) {
  const FlowProgram p = LowerCollective(Make(CollectiveKind::kAllReduce, 4, 400));
  EXPECT_EQ(p.flows.size(), 2u * 3 * 4);
  for (int m = 0; m < 4; ++m) EXPECT_DOUBLE_EQ(Sent(p, m), 2.0 * 3 / 4 * 400);
  for (const Flow& f : p.flows) EXPECT_EQ(f.dst, (f.src + 1) % 4);
  // Step 1 of member 2 waits for step 0 of members 1 (its data) and 2 (its link).
  EXPECT_EQ(p.flows[4 + 2].deps, (std::vector<int>{1, 2}));
}

TEST(Lowering, ReduceScatterAndAllGatherAreHalfRings) {
  for (CollectiveKind k : {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
    const FlowProgram p = LowerCollective(Make(k, 8, 800));
    EXPECT_EQ(p.flows.size(), 7u * 8);
    EXPECT_DOUBLE_EQ(Sent(p, 3), 7 * 100.0);
  }
}

TEST(Lowering, BroadcastChainsChunksFromTheRoot) {
  Collective c = Make(CollectiveKind::kBroadcast, 4, 4 * kBroadcastChunkBytes);
  c.root = 12;  // member 2
  const FlowProgram p = LowerCollective(c);
  EXPECT_EQ(p.flows.size(), 4u * 3);  // 4 chunks over 3 hops
  EXPECT_EQ(p.flows[0].src, 2);
  EXPECT_EQ(p.flows[0].dst, 3);
  EXPECT_EQ(p.flows[2].dst, 1);
  EXPECT_DOUBLE_EQ(Sent(p, 1), 0);  // the last member forwards nothing
}

TEST(Lowering, SingleMemberMovesNothing) {
  EXPECT_TRUE(LowerCollective(Make(CollectiveKind::kAllReduce, 1, 100)).flows.empty());
}

TEST(Lowering, UnknownAlgorithmIsAnError) {
  try {
    LowerCollective(Make(CollectiveKind::kAllReduce, 4, 1, "tree"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "collective all_reduce has no algorithm 'tree' (known: auto, ring)");
  }
}

}  // namespace
}  // namespace stratasim::sim
