#include "sim/latency_groups.h"

#include <gtest/gtest.h>

namespace stratasim::sim {
namespace {

// Identical edges: every flow starts at 0, pays its first step's fixed time F/s, transfers for
// T; the group completes at s F + T (lock-stepped steps, the step form), not before.
TEST(LatencyGroups, IdenticalEdgesCompleteAtMeanFixedPlusTransfer) {
  LatencyGroups g;
  const int steps = 10;
  const double step_fixed = 3e-6, transfer = 1e-3;
  for (int f = 0; f < 4; ++f) g.Add(7, f, steps * step_fixed);
  EXPECT_DOUBLE_EQ(g.MeanFixedSeconds(2), steps * step_fixed);
  for (int f = 0; f < 4; ++f) {
    g.Started(f, 0);
    g.TransferStarted(f, step_fixed);
  }
  for (int f = 0; f < 3; ++f) EXPECT_FALSE(g.TransferDone(f, step_fixed + transfer));
  const auto done = g.TransferDone(3, step_fixed + transfer);
  ASSERT_TRUE(done);
  EXPECT_DOUBLE_EQ(done->at_s, steps * step_fixed + transfer);
  EXPECT_EQ(done->flows, (std::vector<int>{0, 1, 2, 3}));
}

// One slow edge among fast ones: the slow edge's transfer bounds the group when it exceeds the
// latency path (mean fixed time + mean transfer), as at step fidelity where it keeps several
// steps in flight; the fixed time is not added in series.
TEST(LatencyGroups, SlowEdgeBoundsTheGroupWhenItOutlastsTheLatencyPath) {
  LatencyGroups g;
  g.Add(0, 0, 100e-6);  // fast edges: 100 us of fixed time, 10 us of transfer
  g.Add(0, 1, 100e-6);
  g.Add(0, 2, 200e-6);  // slow edge: 200 us fixed, 2 ms transfer
  for (int f = 0; f < 3; ++f) g.Started(f, 1.0);
  g.TransferStarted(0, 1.0 + 10e-6);
  g.TransferStarted(1, 1.0 + 10e-6);
  g.TransferStarted(2, 1.0 + 20e-6);
  EXPECT_FALSE(g.TransferDone(0, 1.0 + 20e-6));
  EXPECT_FALSE(g.TransferDone(1, 1.0 + 20e-6));
  const auto done = g.TransferDone(2, 1.0 + 20e-6 + 2e-3);
  ASSERT_TRUE(done);
  EXPECT_DOUBLE_EQ(done->at_s, 1.0 + 20e-6 + 2e-3);  // its own end
  // Latency-bound: fixed times dominate, the group waits for the latency path, measured from
  // the latest start.
  LatencyGroups h;
  h.Add(1, 5, 5e-3);
  h.Add(1, 6, 3e-3);
  h.Started(5, 0);
  h.Started(6, 1e-3);
  h.TransferStarted(5, 1e-4);
  h.TransferStarted(6, 1e-3 + 1e-4);
  EXPECT_FALSE(h.TransferDone(5, 1e-4 + 2e-4));
  const auto late = h.TransferDone(6, 1e-3 + 1e-4 + 4e-4);
  ASSERT_TRUE(late);
  EXPECT_DOUBLE_EQ(late->at_s, 1e-3 + 4e-3 + 3e-4);  // latest start + mean fixed + mean transfer
}

}  // namespace
}  // namespace stratasim::sim
