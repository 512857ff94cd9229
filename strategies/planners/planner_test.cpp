#include "strategies/planners/planner.h"

#include <gtest/gtest.h>

namespace stratasim::planners {
namespace {

std::vector<BlockCost> Blocks() {
  std::vector<BlockCost> b(3);
  for (int i = 0; i < 3; ++i) {
    b[i].forward_s = i + 1;
    b[i].backward_s = 2 * (i + 1);
    b[i].recompute_s = i + 1;
    b[i].activation_bytes = 100;
    b[i].checkpoint_bytes = 10;
    b[i].params = 1;
    b[i].recomputable = true;
  }
  return b;
}

TEST(Planner, PrefixAndRangeSumForwardBackwardAndRecomputation) {
  const std::vector<BlockCost> b = Blocks();
  EXPECT_EQ(PrefixTimes(b), (std::vector<double>{0, 3, 9, 18}));
  EXPECT_DOUBLE_EQ(RangeSeconds(b, 1, 3), 15);
  EXPECT_DOUBLE_EQ(RangeSeconds(b, 1, 3, {false, true, false}), 17);
}

TEST(Planner, StageMemoryCountsStatesInFlightActivationsAndOneRecreatedBlock) {
  CostProfile p;
  p.costs = {Blocks()};
  p.state_bytes_per_param = 16;
  // 2 params x 16 B + 3 micro-batches x 200 B.
  EXPECT_DOUBLE_EQ(StageMemoryBytes(p, 0, 0, 2, 3), 32 + 600);
  // Block 0 recomputed: it keeps 10 B per micro-batch, plus its 100 B re-created once.
  EXPECT_DOUBLE_EQ(StageMemoryBytes(p, 0, 0, 2, 3, {true}), 32 + 3 * 110 + 100);
}

TEST(Planner, PartitionTextListsBlocksPerStage) {
  EXPECT_EQ(PartitionText({0, 6, 13, 20}), "6,7,7");
}

}  // namespace
}  // namespace stratasim::planners
