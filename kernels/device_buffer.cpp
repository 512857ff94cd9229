#include "kernels/device_buffer.h"

#include <cuda_runtime_api.h>

#include <string>
#include <utility>

#include "kernels/cuda_check.h"

namespace stratasim::kernels {
namespace {

std::string Describe(std::size_t bytes) {
  return std::to_string(bytes) + " bytes (" + std::to_string(bytes / (1024.0 * 1024 * 1024)) +
         " GiB)";
}

}  // namespace

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const cudaError_t err = cudaMalloc(&ptr_, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    ptr_ = nullptr;
    int device = -1;
    cudaGetDevice(&device);
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    cudaGetLastError();
    const std::string what =
        err == cudaErrorMemoryAllocation ? "out of device memory" : cudaGetErrorString(err);
    throw DeviceError("cudaMalloc of " + Describe(bytes) + " on device " + std::to_string(device) +
                          " failed: " + what + "; " + Describe(free_bytes) + " free of " +
                          Describe(total_bytes),
                      err == cudaErrorMemoryAllocation);
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const cudaError_t err = cudaMallocHost(&ptr_, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    ptr_ = nullptr;
    throw Error("cudaMallocHost (pinned host memory) of " + Describe(bytes) +
                " failed: " + cudaGetErrorString(err));
  }
}

PinnedBuffer::~PinnedBuffer() {
  if (ptr_ != nullptr) cudaFreeHost(ptr_);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

}  // namespace stratasim::kernels
