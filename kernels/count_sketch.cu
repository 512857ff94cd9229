#include <string>

#include "core/error.h"
#include "kernels/count_sketch.h"
#include "kernels/cuda_check.h"
#include "kernels/dtype_dispatch.cuh"
#include "kernels/sketch_hash.h"

namespace stratasim::kernels {
namespace {

using detail::GridFor;

// The per-row hash keys, passed by value (r <= 64: 512 bytes of kernel parameters) so that no
// thread recomputes them.
struct RowKeys {
  std::uint64_t key[sketch::kMaxSketchRows];
};

RowKeys KeysFor(const CountSketchParams& p) {
  RowKeys keys{};
  for (int k = 0; k < p.rows; ++k) keys.key[k] = sketch::RowKey(p.seed, k);
  return keys;
}

// One block per row (grid-stride over rows): the threads stride over the row's columns, so a
// row's elements are read coalesced and its bit is set once, by thread 0, after
// __syncthreads_or. Zero elements add nothing and are skipped, so the work is O(nnz * r).
__global__ void EncodeKernel(const float* values, long long rows, long long cols, int r,
                             std::uint64_t c, RowKeys keys, float* table, std::uint32_t* bitmap) {
  for (long long i = blockIdx.x; i < rows; i += gridDim.x) {
    int any = 0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
      const float v = values[i * cols + j];
      if (v == 0.0f) continue;
      any = 1;
      const auto element = static_cast<std::uint64_t>(i * cols + j);
      for (int k = 0; k < r; ++k) {
        const std::uint64_t h = sketch::ElementHash(keys.key[k], element);
        atomicAdd(&table[k * c + sketch::Bucket(h, c)], sketch::Sign(h) * v);
      }
    }
    if (__syncthreads_or(any) && threadIdx.x == 0) {
      atomicOr(&bitmap[i / 32], 1u << (i % 32));
    }
  }
}

// One thread per element (grid-stride): the same estimate as DecodeCountSketch.
__global__ void DecodeKernel(const float* table, const std::uint32_t* bitmap, long long rows,
                             long long cols, int r, std::uint64_t c, RowKeys keys, float* out) {
  const long long n = rows * cols;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = e / cols;
    if (!((bitmap[i / 32] >> (i % 32)) & 1u)) {
      out[e] = 0.0f;
      continue;
    }
    float estimates[sketch::kMaxSketchRows];
    for (int k = 0; k < r; ++k) {
      const std::uint64_t h = sketch::ElementHash(keys.key[k], static_cast<std::uint64_t>(e));
      estimates[k] = sketch::Sign(h) * table[k * c + sketch::Bucket(h, c)];
    }
    out[e] = sketch::MedianInPlace(estimates, r);
  }
}

void Check(const char* kernel, long long rows, long long cols, const CountSketchParams& p) {
  if (rows < 1 || cols < 1 || p.rows < 1 || p.rows > sketch::kMaxSketchRows || p.columns < 1) {
    throw Error(std::string(kernel) + ": a " + std::to_string(rows) + " x " + std::to_string(cols) +
                " gradient, a " + std::to_string(p.rows) + " x " + std::to_string(p.columns) +
                " sketch: need a non-empty gradient, 1 <= r <= " +
                std::to_string(sketch::kMaxSketchRows) + " and c >= 1");
  }
}

constexpr int kEncodeBlock = 128;
constexpr int kDecodeBlock = 256;

}  // namespace

long long BitmapWords(long long rows) { return (rows + 31) / 32; }

void CountSketchEncode(const float* values, long long rows, long long cols,
                       const CountSketchParams& params, float* table, std::uint32_t* bitmap_words,
                       cudaStream_t stream) {
  Check("CountSketchEncode", rows, cols, params);
  const long long blocks = rows < 65535LL * 8 ? rows : 65535LL * 8;
  EncodeKernel<<<static_cast<unsigned>(blocks), kEncodeBlock, 0, stream>>>(
      values, rows, cols, params.rows, static_cast<std::uint64_t>(params.columns), KeysFor(params),
      table, bitmap_words);
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

void CountSketchDecode(const float* table, const std::uint32_t* bitmap_words, long long rows,
                       long long cols, const CountSketchParams& params, float* out,
                       cudaStream_t stream) {
  Check("CountSketchDecode", rows, cols, params);
  DecodeKernel<<<GridFor(rows * cols, kDecodeBlock), kDecodeBlock, 0, stream>>>(
      table, bitmap_words, rows, cols, params.rows, static_cast<std::uint64_t>(params.columns),
      KeysFor(params), out);
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stratasim::kernels
