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

}  // namespace
}  // namespace stratasim
