#include "strategies/planners/autopipe_sim.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim::planners {
namespace {

StageTimes Uniform(int stages, double f, double b, double send = 0) {
  StageTimes t;
  t.forward.assign(stages, f);
  t.backward.assign(stages, b);
  t.send.assign(stages - 1, send);
  return t;
}

TEST(Simulate1F1B, EqualStagesTakeMPlusSMinusOneSlots) {
  // (M + S - 1) (f + b) with no transfers; the last stage is the critical one.
  const Simulated1F1B r = Simulate1F1B(Uniform(4, 1, 2), 8);
  EXPECT_DOUBLE_EQ(r.iteration, 11 * 3);
  EXPECT_DOUBLE_EQ(r.startup, 3);
  EXPECT_EQ(r.critical, 3);
  for (double idle : r.steady_idle) EXPECT_DOUBLE_EQ(idle, 0);
}

TEST(Simulate1F1B, TransfersDelayTheFill) {
  const Simulated1F1B r = Simulate1F1B(Uniform(4, 1, 2, 0.5), 8);
  EXPECT_DOUBLE_EQ(r.startup, 3 * 1 + 3 * 0.5);
  EXPECT_GT(r.iteration, 33);
}

TEST(Simulate1F1B, TheSlowestStageIsCriticalAndSetsThePace) {
  StageTimes t = Uniform(4, 1, 2);
  t.forward[1] = 2;
  t.backward[1] = 4;
  const Simulated1F1B r = Simulate1F1B(t, 8);
  EXPECT_EQ(r.critical, 1);
  EXPECT_DOUBLE_EQ(r.steady_idle[1], 0);
  EXPECT_GT(r.steady_idle[3], 0);
  EXPECT_GE(r.iteration, 8 * 6);
}

TEST(Simulate1F1B, HalvedFirstMicroBatchesShortenTheStartup) {
  StageTimes t = Uniform(4, 1, 2);
  t.half_forward.assign(4, 0.5);
  t.half_backward.assign(4, 1);
  t.half_send.assign(3, 0);
  const Simulated1F1B whole = Simulate1F1B(t, 8);
  // The first of 8 micro-batches cut in two: 9 micro-batches, the first two halves.
  std::vector<bool> halved(9, false);
  halved[0] = halved[1] = true;
  const Simulated1F1B sliced = Simulate1F1B(t, halved);
  EXPECT_DOUBLE_EQ(sliced.startup, 1.5);
  EXPECT_LT(sliced.iteration, whole.iteration);
}

TEST(Simulate1F1B, FewerMicroBatchesThanStagesStillRun) {
  const Simulated1F1B r = Simulate1F1B(Uniform(4, 1, 2), 1);
  EXPECT_DOUBLE_EQ(r.iteration, 4 * 3);
}

TEST(Simulate1F1B, InconsistentSizesAreRefused) {
  StageTimes t = Uniform(3, 1, 2);
  t.send.pop_back();
  try {
    Simulate1F1B(t, 4);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "Simulate1F1B: stage times of inconsistent sizes");
  }
  std::vector<bool> halved(4, true);
  EXPECT_THROW(Simulate1F1B(Uniform(3, 1, 2), halved), Error);  // no half times
}

}  // namespace
}  // namespace stratasim::planners
