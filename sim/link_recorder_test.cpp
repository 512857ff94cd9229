#include "sim/link_recorder.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>

namespace stratasim::sim {
namespace {

std::string Same(const std::string& name) { return name; }

double Sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(LinkRecorder, BytesGoToTheOpenIntervalAndIntervalsCloseWhenDue) {
  LinkRecorder r(1.0);
  const int a = r.AddLink("a", 10);
  const int b = r.AddLink("b", 20);
  EXPECT_FALSE(r.Due(0.5));
  r.Add(a, 4, 0.5);
  EXPECT_TRUE(r.Due(1.0));
  r.Add(a, 3, 1.2);
  r.Close(1.2);
  r.Add(b, 5, 2.0);
  const LinkUsage u = r.Finish(3.0, Same);
  EXPECT_EQ(u.edges_s, (std::vector<double>{0, 1.2, 3.0}));
  ASSERT_EQ(u.links.size(), 2u);
  EXPECT_EQ(u.links[0].name, "a");  // 7 bytes before b's 5
  EXPECT_EQ(u.links[0].bytes_per_interval, (std::vector<double>{7, 0}));
  EXPECT_EQ(u.links[0].bytes, 7);
  EXPECT_EQ(u.links[0].bandwidth_Bps, 10);
  EXPECT_EQ(u.links[1].bytes_per_interval, (std::vector<double>{0, 5}));
  EXPECT_EQ(u.links_used, 2);
  EXPECT_EQ(u.bytes_total, 12);
}

TEST(LinkRecorder, BytesReportedAtTheInstantOfACloseBelongBeforeIt) {
  // A flow that ended at 2.0 whose completion is handled after the close at 2.0 moved its
  // bytes before 2.0.
  LinkRecorder r(1.0);
  const int a = r.AddLink("a", 10);
  r.Add(a, 1, 2.0);
  r.Close(2.0);
  r.Add(a, 6, 2.0);
  r.Add(a, 2, 2.5);
  const LinkUsage u = r.Finish(3.0, Same);
  EXPECT_EQ(u.links[0].bytes_per_interval, (std::vector<double>{7, 2}));
}

TEST(LinkRecorder, ClosingAtTheLastBoundOrBeforeDoesNothing) {
  LinkRecorder r(1.0);
  r.Close(0.0);
  r.Close(2.0);
  r.Close(2.0);
  r.Close(1.0);
  EXPECT_EQ(r.edges_s(), (std::vector<double>{0, 2.0}));
}

TEST(LinkRecorder, MergesNeighboursInPairsPastTheMaximumExactly) {
  LinkRecorder r(1.0);
  const int a = r.AddLink("a", 1);
  double expected = 0;
  // One more interval than the maximum: the 512 closed become 256, then the 513th closes.
  for (int i = 1; i <= kMaxLinkIntervals + 1; ++i) {
    r.Add(a, i, i - 0.5);
    expected += i;
    ASSERT_TRUE(r.Due(i));
    r.Close(i);
  }
  EXPECT_EQ(r.width_s(), 2.0);
  ASSERT_EQ(r.edges_s().size(), static_cast<size_t>(kMaxLinkIntervals / 2 + 2));
  EXPECT_EQ(r.edges_s()[1], 2.0);
  EXPECT_EQ(r.edges_s()[256], 512.0);
  EXPECT_EQ(r.edges_s().back(), 513.0);
  EXPECT_FALSE(r.Due(514.5));  // the target width doubled
  EXPECT_TRUE(r.Due(515.0));
  const LinkUsage u = r.Finish(513.0, Same);
  const std::vector<double>& b = u.links[0].bytes_per_interval;
  ASSERT_EQ(b.size() + 1, u.edges_s.size());
  EXPECT_EQ(b[0], 1 + 2);
  EXPECT_EQ(b[1], 3 + 4);
  EXPECT_EQ(b[255], 511 + 512);
  EXPECT_EQ(b[256], 513);
  EXPECT_EQ(Sum(b), expected);
  EXPECT_EQ(u.links[0].bytes, expected);
}

TEST(LinkRecorder, NeverKeepsMoreThanTheMaximumOfIntervals) {
  LinkRecorder r(1e-3);
  const int a = r.AddLink("a", 1);
  double t = 0, total = 0;
  for (int i = 0; i < 100000; ++i) {
    t += 1e-3 * (1 + i % 7);
    r.Add(a, 0.25 * (i % 5), t);
    total += 0.25 * (i % 5);
    if (r.Due(t)) r.Close(t);
    ASSERT_LE(r.edges_s().size(), static_cast<size_t>(kMaxLinkIntervals) + 1);
  }
  const LinkUsage u = r.Finish(t + 1, Same);
  EXPECT_LE(u.edges_s.size(), static_cast<size_t>(kMaxLinkIntervals) + 1);
  EXPECT_EQ(u.edges_s.back(), t + 1);
  EXPECT_DOUBLE_EQ(u.links[0].bytes, total);
  EXPECT_EQ(u.links[0].bytes, Sum(u.links[0].bytes_per_interval));
  for (size_t i = 1; i < u.edges_s.size(); ++i) EXPECT_LT(u.edges_s[i - 1], u.edges_s[i]);
}

TEST(LinkRecorder, KeepsTheBusiestLinksByBytesThenNameAndCountsTheRest) {
  LinkRecorder r(1.0);
  const int n = kMaxLinkSeries + 8;
  for (int i = 0; i < n; ++i) {
    const int l = r.AddLink("l" + std::to_string(100 + i), 1);
    r.Add(l, i < 2 ? 50 : i, 0.5);  // l100 and l101 tie at 50
  }
  r.AddLink("idle", 1);
  const LinkUsage u = r.Finish(1.0, [](const std::string& s) { return "label " + s; });
  ASSERT_EQ(u.links.size(), static_cast<size_t>(kMaxLinkSeries));
  EXPECT_EQ(u.links[0].name, "l100");
  EXPECT_EQ(u.links[1].name, "l101");
  EXPECT_EQ(u.links[0].label, "label l100");
  EXPECT_EQ(u.links[2].name, "l" + std::to_string(100 + n - 1));
  EXPECT_EQ(u.links_used, n);  // the idle link carried nothing
  double total = 100;
  for (int i = 2; i < n; ++i) total += i;
  EXPECT_EQ(u.bytes_total, total);
}

TEST(LinkRecorder, NothingCarriedIsEmpty) {
  LinkRecorder r;
  const int a = r.AddLink("a", 1);
  r.Add(a, 0, 1.0);
  const LinkUsage u = r.Finish(2.0, Same);
  EXPECT_TRUE(u.edges_s.empty());
  EXPECT_TRUE(u.links.empty());
  EXPECT_EQ(u.links_used, 0);
  EXPECT_EQ(u.bytes_total, 0);
}

TEST(LinkRecorder, EverythingAtTimeZeroIsOneIntervalOfNoWidth) {
  LinkRecorder r;
  r.Add(r.AddLink("a", 1), 8, 0.0);
  const LinkUsage u = r.Finish(0.0, Same);
  EXPECT_EQ(u.edges_s, (std::vector<double>{0, 0}));
  EXPECT_EQ(u.links[0].bytes_per_interval, (std::vector<double>{8}));
}

TEST(LinkRecorder, EndingAtTheLastBoundFoldsWhatEndedThereIntoTheLastInterval) {
  LinkRecorder r(1.0);
  const int a = r.AddLink("a", 1);
  r.Add(a, 3, 1.0);
  r.Close(1.5);
  r.Add(a, 2, 1.5);  // reported after the close at the end
  const LinkUsage u = r.Finish(1.5, Same);
  EXPECT_EQ(u.edges_s, (std::vector<double>{0, 1.5}));
  EXPECT_EQ(u.links[0].bytes_per_interval, (std::vector<double>{5}));
}

}  // namespace
}  // namespace stratasim::sim
