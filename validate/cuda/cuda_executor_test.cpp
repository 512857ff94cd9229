// The executor's checks that come before any device is touched (they run in CI).
#include "validate/cuda/cuda_executor.h"

#include <gtest/gtest.h>

#include "validate/backend.h"

namespace stratasim::validate::cuda {
namespace {

TEST(CudaExecutor, RefusesMoreRanksThanDevicesBeforeRunningAnything) {
  TaskGraph g(3);
  CudaRunLimits limits;
  limits.devices = 2;
  try {
    ExecuteOnCuda(g, limits);
    FAIL() << "no error";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.kind(), BackendError::Kind::kTooFewRanks);
    EXPECT_STREQ(e.what(),
                 "the plan needs 3 ranks (one CUDA device each) but this machine has 2 visible "
                 "CUDA device(s): validate runs plans at the size the devices allow (ranks <= "
                 "devices)");
    EXPECT_TRUE(e.partial().records.empty());
  }
}

}  // namespace
}  // namespace stratasim::validate::cuda
