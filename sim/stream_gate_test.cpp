#include "sim/stream_gate.h"

#include <gtest/gtest.h>

#include <vector>

namespace stratasim::sim {
namespace {

TEST(StreamGate, HoldsOnlyLowerPrioritiesOnTheSameRank) {
  StreamGate gate(2);
  EXPECT_FALSE(gate.Holds(0, -5));  // nothing in flight
  gate.TakeOff(0, 3, 10);
  EXPECT_TRUE(gate.Holds(0, 2));
  EXPECT_TRUE(gate.Holds(0, -1));
  EXPECT_FALSE(gate.Holds(0, 3));  // equal priorities share
  EXPECT_FALSE(gate.Holds(0, 4));
  EXPECT_FALSE(gate.Holds(1, 0));  // another rank
  EXPECT_EQ(gate.in_flight(), 1);
}

TEST(StreamGate, ReleasesInPriorityThenIdOrderOnceNothingHigherFlies) {
  StreamGate gate(1);
  gate.TakeOff(0, 5, 1);
  gate.TakeOff(0, 2, 2);
  gate.Hold(0, 0, 9);
  gate.Hold(0, 1, 7);
  gate.Hold(0, 0, 4);
  gate.Hold(0, 3, 8);
  EXPECT_EQ(gate.held(), 4);
  std::vector<TaskId> released;
  gate.Landed(1, &released);  // priority 2 still flies: only 8 (priority 3) goes
  EXPECT_EQ(released, (std::vector<TaskId>{8}));
  released.clear();
  gate.Landed(2, &released);
  EXPECT_EQ(released, (std::vector<TaskId>{7, 4, 9}));
  EXPECT_EQ(gate.held(), 0);
  EXPECT_EQ(gate.in_flight(), 0);
}

TEST(StreamGate, IgnoresTasksNeverInFlightAndCountsEachOnce) {
  StreamGate gate(1);
  std::vector<TaskId> released;
  gate.Landed(3, &released);  // never took off
  EXPECT_TRUE(released.empty());
  gate.TakeOff(0, 1, 3);
  gate.TakeOff(0, 1, 3);  // twice: still one
  gate.TakeOff(0, 1, 5);
  gate.Hold(0, 0, 6);
  gate.Landed(3, &released);
  EXPECT_TRUE(released.empty());  // 5 (priority 1) still flies
  gate.Landed(3, &released);
  EXPECT_TRUE(released.empty());
  gate.Landed(5, &released);
  EXPECT_EQ(released, (std::vector<TaskId>{6}));
}

}  // namespace
}  // namespace stratasim::sim
