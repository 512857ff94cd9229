// The cuDNN checker's messages and its out-of-memory flag, from status codes alone (no device).
#include "kernels/cudnn_check.h"

#include <gtest/gtest.h>

#include <string>

namespace stratasim::kernels {
namespace {

TEST(CudnnCheck, SuccessIsSilent) { CheckCudnn(CUDNN_STATUS_SUCCESS, "f()", "x.cpp", 1); }

TEST(CudnnCheck, FailureNamesTheCallAndStatus) {
  try {
    CheckCudnn(CUDNN_STATUS_NOT_SUPPORTED_SHAPE, "cudnnBackendFinalize(plan)", "x.cpp", 7);
    FAIL() << "no error";
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("x.cpp:7: cudnnBackendFinalize(plan): ", 0), 0u) << what;
    EXPECT_NE(what.find(cudnnGetErrorString(CUDNN_STATUS_NOT_SUPPORTED_SHAPE)), std::string::npos);
    EXPECT_FALSE(e.out_of_memory());
  }
}

TEST(CudnnCheck, AllocationFailuresAreOutOfMemory) {
  for (cudnnStatus_t s : {CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED,
                          CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED}) {
    try {
      CheckCudnn(s, "f()", "x.cpp", 1);
      FAIL() << "no error";
    } catch (const DeviceError& e) {
      EXPECT_TRUE(e.out_of_memory());
      EXPECT_NE(std::string(e.what()).find(": out of memory"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace stratasim::kernels
