#include "kernels/cudnn_check.h"

#include <string>

namespace stratasim::kernels {

bool CudnnOutOfMemory(cudnnStatus_t status) {
  return status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
         status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
}

void CheckCudnn(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  std::string what = std::string(file) + ":" + std::to_string(line) + ": " + call + ": " +
                     cudnnGetErrorString(status);
  // cuDNN 9 keeps a per-thread message with the detail (which attribute, which constraint).
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  if (detail[0] != '\0') what += std::string(" (") + detail + ")";
  if (CudnnOutOfMemory(status)) what += ": out of memory";
  throw DeviceError(what, CudnnOutOfMemory(status));
}

}  // namespace stratasim::kernels
