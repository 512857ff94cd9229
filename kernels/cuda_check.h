// CUDA and cuBLAS failures as stratasim::Error, naming the call and where it was made, so that a
// validate run ends with a message a user can act on ("out of memory", "no CUDA-capable device")
// instead of a status code. Library code never exits (docs/architecture.md).
#ifndef STRATASIM_KERNELS_CUDA_CHECK_H_
#define STRATASIM_KERNELS_CUDA_CHECK_H_

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <string>

#include "core/error.h"

namespace stratasim::kernels {

// A failed CUDA or cuBLAS call. Whether the device ran out of memory is decided from the
// status code (cudaErrorMemoryAllocation, CUBLAS_STATUS_ALLOC_FAILED), never from the text,
// so that a backend can report kOutOfMemory whatever the message says.
class DeviceError : public Error {
 public:
  DeviceError(const std::string& what, bool out_of_memory)
      : Error(what), out_of_memory_(out_of_memory) {}
  bool out_of_memory() const { return out_of_memory_; }

 private:
  bool out_of_memory_;
};

// Throws DeviceError "FILE:LINE: CALL: REASON" when `status` is not success.
void CheckCuda(cudaError_t status, const char* call, const char* file, int line);
void CheckCublas(cublasStatus_t status, const char* call, const char* file, int line);

// The text cuBLAS gives no function for in every version (cublasGetStatusString exists from
// 11.4.2; kept here so the message format is ours).
const char* CublasStatusName(cublasStatus_t status);

}  // namespace stratasim::kernels

#define STRATASIM_CUDA_CHECK(call) \
  ::stratasim::kernels::CheckCuda((call), #call, __FILE__, __LINE__)
#define STRATASIM_CUBLAS_CHECK(call) \
  ::stratasim::kernels::CheckCublas((call), #call, __FILE__, __LINE__)

#endif  // STRATASIM_KERNELS_CUDA_CHECK_H_
