#include "kernels/device.h"

#include <cuda_runtime_api.h>

namespace stratasim::kernels {

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // leave no error behind for the caller's next check
    return 0;
  }
  return count;
}

std::string CudaUnavailableReason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(err) + ")";
  }
  if (count == 0) return "no CUDA device (cudaGetDeviceCount found 0)";
  return "";
}

}  // namespace stratasim::kernels
