#include <string>

#include "kernels/convert.h"
#include "kernels/cuda_check.h"
#include "kernels/dtype_dispatch.cuh"

namespace stratasim::kernels {
namespace {

using detail::GridFor;

// SplitMix64's finaliser (Steele et al. 2014): a good 64-bit mix, so neighbouring indices give
// independent-looking values without per-thread generator state.
__device__ __forceinline__ std::uint64_t Mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

__device__ __forceinline__ float UniformAt(std::uint64_t seed, long long i, float lo, float hi) {
  const std::uint64_t r = Mix(seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(i));
  const float u = static_cast<float>(r >> 40) * (1.0f / 16777216.0f);  // 24 bits in [0, 1)
  return lo + (hi - lo) * u;
}

// Per-format conversions from and to float.
template <typename T>
struct Format {
  __device__ static T From(float x) { return detail::Store<T>(x); }
  __device__ static float To(T x) { return detail::Load<T>(x); }
};
template <>
struct Format<__nv_fp8_e4m3> {
  __device__ static __nv_fp8_e4m3 From(float x) { return __nv_fp8_e4m3(x); }
  __device__ static float To(__nv_fp8_e4m3 x) { return static_cast<float>(x); }
};
template <>
struct Format<std::int8_t> {
  __device__ static std::int8_t From(float x) {
    return static_cast<std::int8_t>(fminf(127.0f, fmaxf(-128.0f, rintf(x))));
  }
  __device__ static float To(std::int8_t x) { return static_cast<float>(x); }
};

template <typename T>
__global__ void FillKernel(T* dst, long long n, std::uint64_t seed, float lo, float hi) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    dst[i] = Format<T>::From(UniformAt(seed, i, lo, hi));
  }
}

__global__ void FillBytesKernel(std::uint8_t* dst, long long n, std::uint64_t seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    dst[i] = static_cast<std::uint8_t>(Mix(seed * 0x9e3779b97f4a7c15ULL + i) >> 56);
  }
}

template <typename T>
__global__ void ToFloatKernel(const T* src, float* dst, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    dst[i] = Format<T>::To(src[i]);
  }
}

template <typename T>
__global__ void FromFloatKernel(const float* src, T* dst, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    dst[i] = Format<T>::From(src[i]);
  }
}

// Like detail::DispatchFloat, plus the 8-bit formats.
template <typename F>
void DispatchAll(DType d, const char* what, F&& f) {
  switch (d) {
    case DType::kFP8:
      f(__nv_fp8_e4m3{});
      return;
    case DType::kINT8:
      f(std::int8_t{});
      return;
    case DType::kINT4:
      throw Error(std::string(what) + ": dtype int4 is not supported (fp32, tf32, fp16, bf16, " +
                  "fp8, int8 are)");
    default:
      detail::DispatchFloat(d, what, f);
  }
}

constexpr int kBlock = 256;

}  // namespace

void FillUniform(DType dtype, void* dst, long long n, std::uint64_t seed, float lo, float hi,
                 cudaStream_t stream) {
  if (n <= 0) return;
  if (dtype == DType::kINT4) {
    const long long bytes = (n + 1) / 2;
    FillBytesKernel<<<GridFor(bytes, kBlock), kBlock, 0, stream>>>(static_cast<std::uint8_t*>(dst),
                                                                   bytes, seed);
  } else {
    DispatchAll(dtype, "FillUniform", [&](auto tag) {
      using T = decltype(tag);
      FillKernel<T>
          <<<GridFor(n, kBlock), kBlock, 0, stream>>>(static_cast<T*>(dst), n, seed, lo, hi);
    });
  }
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

void ToFloat(DType dtype, const void* src, float* dst, long long n, cudaStream_t stream) {
  if (n <= 0) return;
  DispatchAll(dtype, "ToFloat", [&](auto tag) {
    using T = decltype(tag);
    ToFloatKernel<T><<<GridFor(n, kBlock), kBlock, 0, stream>>>(static_cast<const T*>(src), dst, n);
  });
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

void FromFloat(DType dtype, const float* src, void* dst, long long n, cudaStream_t stream) {
  if (n <= 0) return;
  DispatchAll(dtype, "FromFloat", [&](auto tag) {
    using T = decltype(tag);
    FromFloatKernel<T><<<GridFor(n, kBlock), kBlock, 0, stream>>>(src, static_cast<T*>(dst), n);
  });
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stratasim::kernels
