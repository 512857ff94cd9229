// cuDNN failures as kernels::DeviceError (kernels/cuda_check.h), naming the call, where it was
// made, cuDNN's status and its last error message, so that a validate run that cuDNN cannot
// serve ends with a reason ("not supported: shape", "out of device memory") a user can act on.
#ifndef STRATASIM_KERNELS_CUDNN_CHECK_H_
#define STRATASIM_KERNELS_CUDNN_CHECK_H_

#include <cudnn_graph.h>

#include "kernels/cuda_check.h"

namespace stratasim::kernels {

// True for the statuses that mean cuDNN could not allocate memory (host or device).
bool CudnnOutOfMemory(cudnnStatus_t status);

// Throws DeviceError "FILE:LINE: CALL: STATUS (cuDNN's last message)" unless `status` is success.
void CheckCudnn(cudnnStatus_t status, const char* call, const char* file, int line);

}  // namespace stratasim::kernels

#define STRATASIM_CUDNN_CHECK(call) \
  ::stratasim::kernels::CheckCudnn((call), #call, __FILE__, __LINE__)

#endif  // STRATASIM_KERNELS_CUDNN_CHECK_H_
