#include "sim/collectives/flow_builder.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim::sim {
namespace {

TEST(FlowBuilder, FollowingAFlowMakesItADependencyToo) {
  FlowBuilder b;
  const int first = b.Add(0, 1, 10, {});
  const int feed = b.Add(2, 0, 10, {});
  const int second = b.Add(0, 1, 10, {feed});
  b.SetFollows(second, first);
  EXPECT_EQ(b.flow(second).follows, first);
  EXPECT_EQ(b.flow(second).deps, (std::vector<int>{feed, first}));
  EXPECT_EQ(b.flow(first).follows, -1);
}

TEST(FlowBuilder, OnlyAFlowOfTheSameConnectionCanBeFollowed) {
  FlowBuilder b;
  const int a = b.Add(0, 1, 10, {});
  const int reverse = b.Add(1, 0, 10, {});
  try {
    b.SetFollows(reverse, a);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "flow 1 cannot follow flow 0: they are not on the same connection");
  }
}

}  // namespace
}  // namespace stratasim::sim
