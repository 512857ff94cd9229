#include "kernels/cuda_check.h"

#include <cublas_v2.h>

#include <string>

namespace stratasim::kernels {

void CheckCuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  // Clear a sticky-free error so that later calls on this thread are not reported as failing
  // for this one (sticky errors such as illegal addresses stay, as CUDA intends).
  cudaGetLastError();
  std::string reason = cudaGetErrorString(status);
  if (status == cudaErrorMemoryAllocation) reason = "out of device memory (" + reason + ")";
  throw DeviceError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + reason,
                    status == cudaErrorMemoryAllocation);
}

const char* CublasStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "cuBLAS not initialized (no usable CUDA device?)";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "cuBLAS could not allocate device memory";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "invalid value (unsupported shape, leading dimension or type combination)";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "the GPU architecture does not support this operation";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "mapping error";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "the kernel failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "internal cuBLAS error";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "not supported (type, layout or shape)";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "license error";
  }
  return "unknown cuBLAS status";
}

void CheckCublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw DeviceError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " +
                        CublasStatusName(status),
                    status == CUBLAS_STATUS_ALLOC_FAILED);
}

}  // namespace stratasim::kernels
