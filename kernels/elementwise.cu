#include "kernels/cuda_check.h"
#include "kernels/dtype_dispatch.cuh"
#include "kernels/elementwise.h"

namespace stratasim::kernels {
namespace {

using detail::GridFor;
using detail::Load;
using detail::Store;

constexpr int kBlock = 256;

template <typename T>
__global__ void ScaleAddKernel(float alpha, const T* x, T* y, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    y[i] = Store<T>(alpha * Load(x[i]) + Load(y[i]));
  }
}

template <typename T>
__global__ void GeluKernel(const T* x, T* y, long long n) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float v = Load(x[i]);
    y[i] = Store<T>(0.5f * v * (1.0f + tanhf(kSqrt2OverPi * (v + 0.044715f * v * v * v))));
  }
}

__global__ void Empty() {}

}  // namespace

void EmptyKernel(cudaStream_t stream) {
  Empty<<<1, 1, 0, stream>>>();
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

void ScaleAdd(DType dtype, float alpha, const void* x, void* y, long long n, cudaStream_t stream) {
  if (n <= 0) return;
  detail::DispatchFloat(dtype, "ScaleAdd", [&](auto tag) {
    using T = decltype(tag);
    ScaleAddKernel<T><<<GridFor(n, kBlock), kBlock, 0, stream>>>(alpha, static_cast<const T*>(x),
                                                                 static_cast<T*>(y), n);
  });
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

void Gelu(DType dtype, const void* x, void* y, long long n, cudaStream_t stream) {
  if (n <= 0) return;
  detail::DispatchFloat(dtype, "Gelu", [&](auto tag) {
    using T = decltype(tag);
    GeluKernel<T><<<GridFor(n, kBlock), kBlock, 0, stream>>>(static_cast<const T*>(x),
                                                             static_cast<T*>(y), n);
  });
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stratasim::kernels
