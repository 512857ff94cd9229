#include "validate/host/sync.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

namespace stratasim::validate::host {
namespace {

TEST(HostSync, BarrierReleasesAllWithTheLastArrivalsTime) {
  AbortFlag abort;
  Barrier b(3, &abort);
  Clock clock;
  double t[3] = {0, 0, 0};
  std::thread a([&] { t[0] = b.Wait(clock); });
  std::thread c([&] { t[1] = b.Wait(clock); });
  t[2] = b.Wait(clock);
  a.join();
  c.join();
  EXPECT_EQ(t[0], t[1]);
  EXPECT_EQ(t[1], t[2]);
  EXPECT_GE(t[0], 0);
}

TEST(HostSync, BarrierIsReusable) {
  AbortFlag abort;
  Barrier b(2, &abort);
  Clock clock;
  std::thread a([&] {
    for (int i = 0; i < 100; ++i) b.Wait(clock);
  });
  double last = -1;
  for (int i = 0; i < 100; ++i) {
    const double t = b.Wait(clock);
    EXPECT_GE(t, last);
    last = t;
  }
  a.join();
}

TEST(HostSync, AbortWakesAWaiterWhichThrowsAborted) {
  AbortFlag abort;
  Barrier b(2, &abort);
  Clock clock;
  bool aborted = false;
  std::thread waiter([&] {
    try {
      b.Wait(clock);
    } catch (const Aborted&) {
      aborted = true;
    }
  });
  abort.Abort(std::make_exception_ptr(std::runtime_error("boom")));
  waiter.join();
  EXPECT_TRUE(aborted);
  EXPECT_TRUE(abort.aborted());
  try {
    std::rethrow_exception(abort.error());
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "boom");
  }
}

TEST(HostSync, OnlyTheFirstAbortIsKept) {
  AbortFlag abort;
  abort.Abort(std::make_exception_ptr(std::runtime_error("first")));
  abort.Abort(std::make_exception_ptr(std::runtime_error("second")));
  try {
    std::rethrow_exception(abort.error());
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "first");
  }
}

}  // namespace
}  // namespace stratasim::validate::host
