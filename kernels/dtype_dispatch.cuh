// Internal to kernels/*.cu: element types of a stratasim::DType on the device, conversions
// through float (the kernels compute in FP32, as PyTorch's elementwise kernels do), and a
// host-side dispatch from the runtime DType to a template instance.
#ifndef STRATASIM_KERNELS_DTYPE_DISPATCH_CUH_
#define STRATASIM_KERNELS_DTYPE_DISPATCH_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <string>

#include "core/dtype.h"
#include "core/error.h"

namespace stratasim::kernels::detail {

template <typename T>
__device__ __forceinline__ float Load(T x) {
  return static_cast<float>(x);
}
template <>
__device__ __forceinline__ float Load(__half x) {
  return __half2float(x);
}
template <>
__device__ __forceinline__ float Load(__nv_bfloat16 x) {
  return __bfloat162float(x);
}

template <typename T>
__device__ __forceinline__ T Store(float x) {
  return static_cast<T>(x);
}
template <>
__device__ __forceinline__ __half Store(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 Store(float x) {
  return __float2bfloat16_rn(x);
}

// Grid size for a grid-stride loop over n elements: enough blocks to fill the GPU several times
// over, capped so that launching is cheap for huge n.
inline unsigned GridFor(long long n, int block) {
  long long blocks = (n + block - 1) / block;
  if (blocks < 1) blocks = 1;
  if (blocks > 65535LL * 8) blocks = 65535LL * 8;
  return static_cast<unsigned>(blocks);
}

// Calls f(T{}) with T the storage type of a floating-point DType the elementwise kernels take:
// FP32 (and TF32, stored as FP32), FP16, BF16. Other formats are a clear error.
template <typename F>
void DispatchFloat(DType d, const char* kernel, F&& f) {
  switch (d) {
    case DType::kFP32:
    case DType::kTF32:
      f(float{});
      return;
    case DType::kFP16:
      f(__half{});
      return;
    case DType::kBF16:
      f(__nv_bfloat16{});
      return;
    default:
      throw Error(std::string(kernel) + ": dtype " + std::string(ToString(d)) +
                  " is not supported (fp32, tf32, fp16, bf16 are)");
  }
}

}  // namespace stratasim::kernels::detail

#endif  // STRATASIM_KERNELS_DTYPE_DISPATCH_CUH_
