#include "core/intervals.h"

#include <gtest/gtest.h>

namespace stratasim {
namespace {

TEST(Intervals, UnionMergesOverlapsAndDropsEmpties) {
  EXPECT_EQ(Union({{3, 4}, {0, 1}, {0.5, 2}, {5, 5}, {2, 2.5}}),
            (std::vector<Interval>{{0, 2.5}, {3, 4}}));
}

TEST(Intervals, LengthsAreClippedToTheWindow) {
  const std::vector<Interval> a = Union({{0, 2}, {3, 6}});
  EXPECT_DOUBLE_EQ(CoveredLength(a, 1, 5), 3);
  const std::vector<Interval> b = Union({{1.5, 3.5}, {4, 4.5}});
  // a minus b: [0,1.5) [3.5,4) [4.5,6), clipped to [1, 5]: 0.5 + 0.5 + 0.5.
  EXPECT_DOUBLE_EQ(ExclusiveLength(a, b, 1, 5), 1.5);
}

// Sealing at t measures what lies before t and keeps the rest, clipped to start at t.
TEST(SealedIntervals, MeasuresPieceByPieceAsAWholeWould) {
  SealedIntervals sets(1, 2);
  sets.Add(0, 0, {0, 2});
  sets.Add(0, 0, {1, 3});
  sets.Add(1, 0, {2.5, 4});
  double busy = 0, other = 0;
  auto measure = [&](double lo, double hi) {
    return [&, lo, hi](int, const std::vector<std::vector<Interval>>& s) {
      busy += CoveredLength(s[0], lo, hi);
      other += ExclusiveLength(s[1], s[0], lo, hi);
    };
  };
  sets.Seal(2, measure(0, 2));
  EXPECT_DOUBLE_EQ(busy, 2);
  sets.Add(1, 0, {3.5, 5});  // starts after the seal
  sets.Seal(10, measure(2, 10));
  EXPECT_DOUBLE_EQ(busy, 3);   // [0, 3)
  EXPECT_DOUBLE_EQ(other, 2);  // [3, 5)
  sets.Seal(20, measure(10, 20));
  EXPECT_DOUBLE_EQ(busy, 3);  // nothing was kept past 10
}

}  // namespace
}  // namespace stratasim
