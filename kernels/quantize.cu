#include <string>

#include "kernels/block_reduce.cuh"
#include "kernels/cuda_check.h"
#include "kernels/dtype_dispatch.cuh"
#include "kernels/quantize.h"

namespace stratasim::kernels {
namespace {

using detail::BlockReduce;
using detail::GridFor;
using detail::Load;
using detail::MaxOp;
using detail::Store;

constexpr int kThreads = 256;

// One thread block per quantization block: reduce the absmax, then quantize.
template <typename T>
__global__ void QuantizeKernel(const T* x, long long n, int block, std::int8_t* q, float* scales) {
  const long long lo = static_cast<long long>(blockIdx.x) * block;
  const long long hi = min(n, lo + block);
  float absmax = 0;
  for (long long i = lo + threadIdx.x; i < hi; i += blockDim.x)
    absmax = fmaxf(absmax, fabsf(Load(x[i])));
  absmax = BlockReduce(absmax, MaxOp{});
  const float scale = absmax > 0 ? absmax / 127.0f : 1.0f;
  if (threadIdx.x == 0) scales[blockIdx.x] = scale;
  for (long long i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    // IEEE division (nvcc's default -prec-div=true) and round-half-even, as the reference.
    const float r = rintf(Load(x[i]) / scale);
    q[i] = static_cast<std::int8_t>(fminf(127.0f, fmaxf(-127.0f, r)));
  }
}

template <typename T>
__global__ void DequantizeKernel(const std::int8_t* q, const float* scales, long long n, int block,
                                 T* y) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    y[i] = Store<T>(q[i] * scales[i / block]);
  }
}

void CheckBlock(const char* kernel, long long n, int block) {
  if (block <= 0 || block > (1 << 20) || (n + block - 1) / block > 2147483647LL) {
    throw Error(std::string(kernel) + ": block " + std::to_string(block) +
                " must be in [1, 2^20] with fewer than 2^31 blocks");
  }
}

}  // namespace

void QuantizeInt8(DType dtype, const void* x, long long n, int block, std::int8_t* q, float* scales,
                  cudaStream_t stream) {
  CheckBlock("QuantizeInt8", n, block);
  if (n <= 0) return;
  const unsigned blocks = static_cast<unsigned>((n + block - 1) / block);
  detail::DispatchFloat(dtype, "QuantizeInt8", [&](auto tag) {
    using T = decltype(tag);
    QuantizeKernel<T>
        <<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(x), n, block, q, scales);
  });
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

void DequantizeInt8(DType dtype, const std::int8_t* q, const float* scales, long long n, int block,
                    void* y, cudaStream_t stream) {
  CheckBlock("DequantizeInt8", n, block);
  if (n <= 0) return;
  detail::DispatchFloat(dtype, "DequantizeInt8", [&](auto tag) {
    using T = decltype(tag);
    DequantizeKernel<T>
        <<<GridFor(n, kThreads), kThreads, 0, stream>>>(q, scales, n, block, static_cast<T*>(y));
  });
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stratasim::kernels
