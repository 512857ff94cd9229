#include <string>

#include "core/error.h"
#include "kernels/casq.h"
#include "kernels/casq_hash.h"
#include "kernels/cuda_check.h"
#include "kernels/dtype_dispatch.cuh"

namespace stratasim::kernels {
namespace {

using detail::GridFor;

constexpr int kThreads = 256;
constexpr int kMaxClusters = 256;  // q <= 8

// Each block stages the centres and table offsets in shared memory: every element reads all K
// centres (the authors' O(P * K) encode).
__global__ void EncodeKernel(const float* x, long long n, int bits, const float* centres,
                             const long long* offsets, std::uint64_t seed, std::uint32_t* codes,
                             float* sums, unsigned* counts) {
  __shared__ float s_centres[kMaxClusters];
  __shared__ long long s_offsets[kMaxClusters + 1];
  const int k = 1 << bits;
  for (int c = threadIdx.x; c <= k; c += blockDim.x) {
    if (c < k) s_centres[c] = centres[c];
    s_offsets[c] = offsets[c];
  }
  __syncthreads();
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float v = x[i];
    const int c = casq::NearestCentre(v, s_centres, k);
    const casq::CodeBits cb = casq::PlaceCode(i, bits, c);
    atomicOr(&codes[cb.word], cb.low);
    if (cb.high != 0) atomicOr(&codes[cb.word + 1], cb.high);
    const long long b = casq::BucketIn(s_offsets[c], s_offsets[c + 1], seed, i);
    atomicAdd(&sums[b], v);
    atomicAdd(&counts[b], 1u);
  }
}

__global__ void MeansKernel(float* sums, const unsigned* counts, long long buckets) {
  for (long long b = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; b < buckets;
       b += static_cast<long long>(gridDim.x) * blockDim.x) {
    sums[b] = counts[b] > 0 ? sums[b] / static_cast<float>(counts[b]) : 0.0f;
  }
}

// One thread per element reduces over the workers (the authors reduce in shared memory; with the
// workers' payloads side by side a per-thread loop is the same sum, in a fixed order).
__global__ void DecodeKernel(const std::uint32_t* codes, const float* means, int workers,
                             long long n, int bits, const long long* offsets, long long buckets,
                             std::uint64_t seed, float* sum) {
  __shared__ long long s_offsets[kMaxClusters + 1];
  const int k = 1 << bits;
  for (int c = threadIdx.x; c <= k; c += blockDim.x) s_offsets[c] = offsets[c];
  __syncthreads();
  const long long words = casq::CodeWords(n, bits);
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float acc = 0.0f;
    for (int w = 0; w < workers; ++w) {
      const int c = casq::ReadCode(codes + w * words, i, bits);
      acc += means[w * buckets + casq::BucketIn(s_offsets[c], s_offsets[c + 1], seed, i)];
    }
    sum[i] = acc;
  }
}

void CheckBits(const char* kernel, int bits) {
  if (bits < 1 || bits > 8) {
    throw Error(std::string(kernel) + ": bits " + std::to_string(bits) + " must be in [1, 8]");
  }
}

}  // namespace

void CasqEncode(const float* x, long long n, int bits, const float* centres,
                const long long* offsets, long long buckets, std::uint64_t hash_seed,
                std::uint32_t* codes, float* means, unsigned* counts, cudaStream_t stream) {
  CheckBits("CasqEncode", bits);
  if (n <= 0) return;
  STRATASIM_CUDA_CHECK(cudaMemsetAsync(
      codes, 0, static_cast<std::size_t>(casq::CodeWords(n, bits)) * sizeof(std::uint32_t),
      stream));
  STRATASIM_CUDA_CHECK(
      cudaMemsetAsync(means, 0, static_cast<std::size_t>(buckets) * sizeof(float), stream));
  STRATASIM_CUDA_CHECK(
      cudaMemsetAsync(counts, 0, static_cast<std::size_t>(buckets) * sizeof(unsigned), stream));
  EncodeKernel<<<GridFor(n, kThreads), kThreads, 0, stream>>>(x, n, bits, centres, offsets,
                                                              hash_seed, codes, means, counts);
  STRATASIM_CUDA_CHECK(cudaGetLastError());
  MeansKernel<<<GridFor(buckets, kThreads), kThreads, 0, stream>>>(means, counts, buckets);
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

void CasqDecode(const std::uint32_t* codes, const float* means, int workers, long long n, int bits,
                const long long* offsets, long long buckets, std::uint64_t hash_seed, float* sum,
                cudaStream_t stream) {
  CheckBits("CasqDecode", bits);
  if (n <= 0) return;
  DecodeKernel<<<GridFor(n, kThreads), kThreads, 0, stream>>>(codes, means, workers, n, bits,
                                                              offsets, buckets, hash_seed, sum);
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stratasim::kernels
