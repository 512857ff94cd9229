// What the CUDA runtime and NCCL say about this machine, without failing when there is no GPU.
#ifndef STRATASIM_VALIDATE_DEVICE_INFO_H_
#define STRATASIM_VALIDATE_DEVICE_INFO_H_

#include <string>
#include <vector>

namespace stratasim::validate {

struct DeviceInfo {
  int cuda_runtime_version = 0;  // e.g. 13000
  int nccl_version = 0;          // e.g. 22805
  // Why no device can be used ("no CUDA-capable device", "driver version is insufficient"),
  // empty when at least one can.
  std::string unavailable_reason;
  std::vector<std::string> devices;  // name of each visible device
  std::vector<double> device_memory_bytes;
};

// Never throws and never needs a device: on a machine without a GPU it fills the reason.
DeviceInfo QueryDevices();

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_DEVICE_INFO_H_
