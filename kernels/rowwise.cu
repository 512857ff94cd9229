#include <string>

#include "kernels/block_reduce.cuh"
#include "kernels/cuda_check.h"
#include "kernels/dtype_dispatch.cuh"
#include "kernels/rowwise.h"

namespace stratasim::kernels {
namespace {

using detail::BlockReduce;
using detail::Load;
using detail::MaxOp;
using detail::Store;
using detail::SumOp;

constexpr int kBlock = 256;

// Three passes over the row (max, sum of exponentials, write); rows of attention scores are at
// most a few tens of thousands of values, so the re-reads hit L2.
template <typename T>
__global__ void SoftmaxKernel(const T* x, T* y, int cols, float scale) {
  const long long base = static_cast<long long>(blockIdx.x) * cols;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) mx = fmaxf(mx, scale * Load(x[base + j]));
  mx = BlockReduce(mx, MaxOp{});
  float sum = 0;
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    sum += __expf(scale * Load(x[base + j]) - mx);
  sum = BlockReduce(sum, SumOp{});
  const float inv = 1.0f / sum;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    y[base + j] = Store<T>(__expf(scale * Load(x[base + j]) - mx) * inv);
  }
}

template <typename T>
__global__ void LayerNormKernel(const T* x, const float* gamma, const float* beta, T* y, int cols,
                                float eps) {
  const long long base = static_cast<long long>(blockIdx.x) * cols;
  float sum = 0;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) sum += Load(x[base + j]);
  const float mean = BlockReduce(sum, SumOp{}) / cols;
  // Two-pass variance: no cancellation when |mean| is large against the spread.
  float sq = 0;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float d = Load(x[base + j]) - mean;
    sq += d * d;
  }
  const float inv = rsqrtf(BlockReduce(sq, SumOp{}) / cols + eps);
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    y[base + j] = Store<T>((Load(x[base + j]) - mean) * inv * gamma[j] + beta[j]);
  }
}

void CheckRows(const char* kernel, long long rows, int cols) {
  if (cols <= 0 || rows > 2147483647LL) {
    throw Error(std::string(kernel) + ": " + std::to_string(rows) + " rows of " +
                std::to_string(cols) + " columns: need cols > 0 and rows < 2^31");
  }
}

}  // namespace

void Softmax(DType dtype, const void* x, void* y, long long rows, int cols, float scale,
             cudaStream_t stream) {
  CheckRows("Softmax", rows, cols);
  if (rows <= 0) return;
  detail::DispatchFloat(dtype, "Softmax", [&](auto tag) {
    using T = decltype(tag);
    SoftmaxKernel<T><<<static_cast<unsigned>(rows), kBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), cols, scale);
  });
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

void LayerNorm(DType dtype, const void* x, const float* gamma, const float* beta, void* y,
               long long rows, int cols, float eps, cudaStream_t stream) {
  CheckRows("LayerNorm", rows, cols);
  if (rows <= 0) return;
  detail::DispatchFloat(dtype, "LayerNorm", [&](auto tag) {
    using T = decltype(tag);
    LayerNormKernel<T><<<static_cast<unsigned>(rows), kBlock, 0, stream>>>(
        static_cast<const T*>(x), gamma, beta, static_cast<T*>(y), cols, eps);
  });
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stratasim::kernels
