#include "kernels/cuda_check.h"

#include <gtest/gtest.h>

#include <string>

namespace stratasim::kernels {
namespace {

// No device is needed: the checks only read the status they are given.
DeviceError Thrown(void (*check)()) {
  try {
    check();
  } catch (const DeviceError& e) {
    return e;
  }
  ADD_FAILURE() << "no DeviceError thrown";
  return DeviceError("", false);
}

TEST(CudaCheck, OutOfMemoryComesFromTheStatusCode) {
  const DeviceError oom =
      Thrown([] { CheckCuda(cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "f.cu", 7); });
  EXPECT_TRUE(oom.out_of_memory());
  EXPECT_EQ(std::string(oom.what()).rfind("f.cu:7: cudaMalloc(&p, n): out of device memory (", 0),
            0u)
      << oom.what();
  const DeviceError launch =
      Thrown([] { CheckCuda(cudaErrorInvalidValue, "cudaMemcpy(a, b, n, k)", "f.cu", 9); });
  EXPECT_FALSE(launch.out_of_memory());
  const DeviceError blas_oom =
      Thrown([] { CheckCublas(CUBLAS_STATUS_ALLOC_FAILED, "cublasCreate(&h)", "g.cpp", 3); });
  EXPECT_TRUE(blas_oom.out_of_memory());
  EXPECT_STREQ(blas_oom.what(),
               "g.cpp:3: cublasCreate(&h): cuBLAS could not allocate device memory");
  const DeviceError blas =
      Thrown([] { CheckCublas(CUBLAS_STATUS_INVALID_VALUE, "cublasGemmEx(...)", "g.cpp", 4); });
  EXPECT_FALSE(blas.out_of_memory());
}

TEST(CudaCheck, SuccessThrowsNothing) {
  EXPECT_NO_THROW(CheckCuda(cudaSuccess, "x", "f", 1));
  EXPECT_NO_THROW(CheckCublas(CUBLAS_STATUS_SUCCESS, "x", "f", 1));
}

}  // namespace
}  // namespace stratasim::kernels
