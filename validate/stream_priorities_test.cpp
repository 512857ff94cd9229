#include "validate/stream_priorities.h"

#include <gtest/gtest.h>

#include <vector>

namespace stratasim::validate {
namespace {

TEST(CudaStreamPriorities, KeepTheGraphsOrderWithinTheDevicesRange) {
  // A range of [-5, 0]: the graph's lowest priority gets 0 (the default), higher ones go down.
  EXPECT_EQ(CudaStreamPriorities({0, 2, 1, 2}, 0, -5), (std::vector<int>{0, -2, -1, -2}));
  EXPECT_EQ(CudaStreamPriorities({-3, 0, 7}, 0, -5), (std::vector<int>{0, -1, -2}));
  // More levels than the device has: the most urgent ones share its greatest priority.
  EXPECT_EQ(CudaStreamPriorities({0, 1, 2, 3}, 0, -1), (std::vector<int>{0, -1, -1, -1}));
}

TEST(CudaStreamPriorities, EqualPrioritiesAllGetTheDefault) {
  EXPECT_EQ(CudaStreamPriorities({0, 0, 0}, 0, -5), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(CudaStreamPriorities({4, 4}, 0, -5), (std::vector<int>{0, 0}));
  EXPECT_TRUE(CudaStreamPriorities({}, 0, -5).empty());
}

}  // namespace
}  // namespace stratasim::validate
