#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <string>

#include "core/error.h"
#include "kernels/bit_quantize.h"
#include "kernels/block_reduce.cuh"
#include "kernels/cuda_check.h"
#include "kernels/dtype_dispatch.cuh"

namespace stratasim::kernels {
namespace {

using detail::BlockReduce;
using detail::GridFor;
using detail::MaxOp;
using reference::BitFormat;

constexpr int kThreads = 256;

// *absmax_bits must start at 0 (the bits of +0.0f).
__global__ void AbsMaxKernel(const float* x, long long n, int* absmax_bits) {
  float m = 0.0f;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    m = fmaxf(m, fabsf(x[i]));
  }
  m = BlockReduce(m, MaxOp{});
  if (threadIdx.x == 0) atomicMax(absmax_bits, __float_as_int(m));
}

// Turns the absmax in *scale into the scale, as the reference: absmax / qmax, 1 for zeros.
__global__ void ScaleKernel(float* scale, float qmax) {
  const float absmax = *scale;
  *scale = absmax > 0 ? absmax / qmax : 1.0f;
}

__global__ void IntKernel(const float* x, long long n, const float* scale, float qmax, float* y) {
  const float s = *scale;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    // IEEE division (nvcc's default -prec-div=true) and round-half-even, as the reference.
    const float q = fminf(qmax, fmaxf(-qmax, rintf(__fdiv_rn(x[i], s))));
    y[i] = __fmul_rn(q, s);
  }
}

template <BitFormat F>
__device__ __forceinline__ float RoundTo(float v) {
  if constexpr (F == BitFormat::kFp8E4M3) {
    return static_cast<float>(__nv_fp8_e4m3(v));
  } else if constexpr (F == BitFormat::kFp8E5M2) {
    return static_cast<float>(__nv_fp8_e5m2(v));
  } else if constexpr (F == BitFormat::kFp16) {
    return __half2float(__float2half_rn(v));
  } else {
    return __bfloat162float(__float2bfloat16_rn(v));
  }
}

template <BitFormat F>
__global__ void CastKernel(const float* x, long long n, float* y, float* scale) {
  const long long first = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (first == 0) *scale = 1.0f;
  for (long long i = first; i < n; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    y[i] = RoundTo<F>(x[i]);
  }
}

template <BitFormat F>
void LaunchCast(const float* x, long long n, float* y, float* scale, cudaStream_t stream) {
  CastKernel<F><<<GridFor(n, kThreads), kThreads, 0, stream>>>(x, n, y, scale);
}

}  // namespace

void BitQuantize(const float* x, long long n, const reference::BitPrecision& p, float* y,
                 float* scale, cudaStream_t stream) {
  const std::string bad = reference::CheckBitPrecision(p);
  if (!bad.empty()) throw Error("BitQuantize " + reference::ToString(p) + ": " + bad);
  if (n < 0) throw Error("BitQuantize: n " + std::to_string(n) + " < 0");
  switch (p.format) {
    case BitFormat::kInt: {
      const float qmax = static_cast<float>(reference::IntMaxCode(p.bits));
      STRATASIM_CUDA_CHECK(cudaMemsetAsync(scale, 0, sizeof(float), stream));
      if (n > 0) {
        AbsMaxKernel<<<GridFor(n, kThreads), kThreads, 0, stream>>>(x, n,
                                                                    reinterpret_cast<int*>(scale));
        STRATASIM_CUDA_CHECK(cudaGetLastError());
      }
      ScaleKernel<<<1, 1, 0, stream>>>(scale, qmax);
      STRATASIM_CUDA_CHECK(cudaGetLastError());
      if (n > 0) IntKernel<<<GridFor(n, kThreads), kThreads, 0, stream>>>(x, n, scale, qmax, y);
      break;
    }
    case BitFormat::kFp8E4M3:
      LaunchCast<BitFormat::kFp8E4M3>(x, n, y, scale, stream);
      break;
    case BitFormat::kFp8E5M2:
      LaunchCast<BitFormat::kFp8E5M2>(x, n, y, scale, stream);
      break;
    case BitFormat::kFp16:
      LaunchCast<BitFormat::kFp16>(x, n, y, scale, stream);
      break;
    case BitFormat::kBf16:
      LaunchCast<BitFormat::kBf16>(x, n, y, scale, stream);
      break;
  }
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stratasim::kernels
