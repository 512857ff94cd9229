// Owning handles for device and pinned host memory. An allocation that fails throws
// stratasim::Error saying how much was asked for and on which device, which is how a validate
// run reports that a plan does not fit the real GPU.
#ifndef STRATASIM_KERNELS_DEVICE_BUFFER_H_
#define STRATASIM_KERNELS_DEVICE_BUFFER_H_

#include <cstddef>

namespace stratasim::kernels {

// cudaMalloc on the current device; move-only; freed in the destructor.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// cudaMallocHost (page-locked), so that cudaMemcpyAsync runs asynchronously at full PCIe speed.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_DEVICE_BUFFER_H_
