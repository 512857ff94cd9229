#include "validate/device_info.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

namespace stratasim::validate {

DeviceInfo QueryDevices() {
  DeviceInfo info;
  cudaRuntimeGetVersion(&info.cuda_runtime_version);
  ncclGetVersion(&info.nccl_version);
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    info.unavailable_reason = cudaGetErrorString(err);
    return info;
  }
  if (count == 0) {
    info.unavailable_reason = "no CUDA-capable device";
    return info;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
    info.devices.push_back(prop.name);
    info.device_memory_bytes.push_back(static_cast<double>(prop.totalGlobalMem));
  }
  return info;
}

}  // namespace stratasim::validate
