// Whether this process can use a CUDA device, asked without failing: GPU tests skip with the
// reason, and the cuda backend refuses to start with it.
#ifndef STRATASIM_KERNELS_DEVICE_H_
#define STRATASIM_KERNELS_DEVICE_H_

#include <string>

namespace stratasim::kernels {

// Number of visible CUDA devices; 0 when the runtime reports an error (no driver, no GPU).
int CudaDeviceCount();
// Empty when at least one device can be used, else why not, e.g. "no CUDA device
// (cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version)".
std::string CudaUnavailableReason();

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_DEVICE_H_
