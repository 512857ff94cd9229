#include "validate/clock_sync.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "validate/local_process_group.h"

namespace stratasim::validate {
namespace {

double Seconds(SteadyTime a, SteadyTime b) { return std::chrono::duration<double>(a - b).count(); }

// Runs SyncClocks on n thread-processes, process p reading steady_clock shifted by shift_s[p].
std::vector<ClockSync> SyncAll(const std::vector<double>& shift_s) {
  const int n = static_cast<int>(shift_s.size());
  auto pg = LocalProcessGroups(n, 5.0);
  std::vector<ClockSync> out(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int p = 0; p < n; ++p) {
    threads.emplace_back([&, p] {
      const auto shift = std::chrono::duration_cast<SteadyTime::duration>(
          std::chrono::duration<double>(shift_s[static_cast<std::size_t>(p)]));
      out[static_cast<std::size_t>(p)] =
          SyncClocks(*pg[static_cast<std::size_t>(p)], ClockSyncOptions{},
                     [shift] { return std::chrono::steady_clock::now() + shift; });
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

TEST(ClockSync, ProcessesOfOneClockGetOffsetZeroAndOneStartInstant) {
  const auto s = SyncAll({0, 0, 0, 0});
  for (const ClockSync& c : s) {
    // The kept round trip bounds the error: a thread hand-off takes microseconds, and even a
    // descheduled sample is beaten by one of the 16.
    EXPECT_LT(std::abs(c.offset_s), 1e-3);
    EXPECT_LE(std::abs(c.offset_s), c.round_trip_s / 2 + 1e-9);
    EXPECT_LT(std::abs(Seconds(c.start, s[0].start)), 1e-3);
  }
  EXPECT_EQ(s[0].offset_s, 0);
  // The start instant lies ahead of the sync by about the lead (0.02 s).
  EXPECT_GT(Seconds(s[0].start, std::chrono::steady_clock::now()), 0.0);
}

TEST(ClockSync, RecoversAKnownOffsetBetweenClocks) {
  // Process 1's clock runs 3 s ahead of process 0's, process 2's 250 ms behind.
  const auto s = SyncAll({0, 3.0, -0.25});
  EXPECT_NEAR(s[1].offset_s, -3.0, 1e-3);
  EXPECT_NEAR(s[2].offset_s, 0.25, 1e-3);
  // The same instant, read on each process's own clock.
  EXPECT_NEAR(Seconds(s[1].start, s[0].start), 3.0, 1e-3);
  EXPECT_NEAR(Seconds(s[2].start, s[0].start), -0.25, 1e-3);
}

TEST(ClockSync, ASilentRankIsAnErrorNamingIt) {
  auto pg = LocalProcessGroups(2, 0.2);
  try {
    SyncClocks(*pg[1]);
    FAIL();
  } catch (const ProcessGroupError& e) {
    EXPECT_EQ(e.peer(), 0);
    EXPECT_STREQ(e.what(), "rank 1: clock sync: no message from rank 0 within 0.2 s");
  }
  ClockSyncOptions bad;
  bad.samples = 0;
  EXPECT_THROW(SyncClocks(*pg[0], bad), Error);
}

}  // namespace
}  // namespace stratasim::validate
