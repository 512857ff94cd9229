#include "search/pareto.h"

#include <gtest/gtest.h>

namespace stratasim::search {
namespace {

TEST(ParetoTest, KeepsThePlansNothingBeatsOnBothCosts) {
  // (time, memory): 0 is fastest, 2 uses least memory, 1 sits between them; 3 is beaten by 1
  // on both, 4 ties 0 on time with more memory.
  const std::vector<std::pair<double, double>> points = {
      {1.0, 50}, {2.0, 30}, {4.0, 10}, {3.0, 40}, {1.0, 60}};
  EXPECT_EQ(ParetoFront(points), (std::vector<size_t>{0, 1, 2}));
}

TEST(ParetoTest, ListsEqualPointsOnce) {
  EXPECT_EQ(ParetoFront({{2.0, 5}, {1.0, 9}, {2.0, 5}}), (std::vector<size_t>{1, 0}));
  EXPECT_TRUE(ParetoFront({}).empty());
}

}  // namespace
}  // namespace stratasim::search
