// CASQ's per-element arithmetic shared by the CPU reference (kernels/casq_ref.h) and the CUDA
// kernels (kernels/casq.cu), so the two hash and pack identically: the bucket of an element
// index, the nearest centre, and q-bit codes packed into uint32 words.
//
// CASQ (Cluster-Aware Sketch Quantization, CLUSTER 2021; the authors' code LSTM/CASQ,
// LSSkernel.cu, see /work/shared/notes/comm-compression.md) hashes each element's index with
// a BKDR string hash into the table of the element's cluster.
#ifndef STRATASIM_KERNELS_CASQ_HASH_H_
#define STRATASIM_KERNELS_CASQ_HASH_H_

#include <cstdint>

#ifdef __CUDACC__
#define STRATASIM_HOST_DEVICE __host__ __device__
#else
#define STRATASIM_HOST_DEVICE
#endif

namespace stratasim::kernels::casq {

// BKDR hash (Kernighan & Ritchie's multiplicative string hash with seed 131) over the eight
// little-endian bytes of the index, most significant first, in 32-bit arithmetic; it starts
// from the low 32 bits of `seed`, which every worker shares (all must hash alike).
STRATASIM_HOST_DEVICE inline std::uint32_t BkdrHash(std::uint64_t seed, long long index) {
  const std::uint64_t key = static_cast<std::uint64_t>(index);
  std::uint32_t h = static_cast<std::uint32_t>(seed);
  for (int byte = 7; byte >= 0; --byte)
    h = h * 131u + static_cast<std::uint32_t>((key >> (8 * byte)) & 0xffu);
  return h;
}

// The bucket of element `index` in the table holding buckets [lo, hi): lo + the hash modulo the
// table size.
STRATASIM_HOST_DEVICE inline long long BucketIn(long long lo, long long hi, std::uint64_t seed,
                                                long long index) {
  return lo + static_cast<long long>(BkdrHash(seed, index)) % (hi - lo);
}

// The index of the centre nearest to x among k ascending centres; ties go to the lower index.
STRATASIM_HOST_DEVICE inline int NearestCentre(float x, const float* centres, int k) {
  int best = 0;
  float best_d = x > centres[0] ? x - centres[0] : centres[0] - x;
  for (int c = 1; c < k; ++c) {
    const float d = x > centres[c] ? x - centres[c] : centres[c] - x;
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

// uint32 words holding n codes of `bits` bits back to back (a code may straddle two words).
STRATASIM_HOST_DEVICE inline long long CodeWords(long long n, int bits) {
  return (n * bits + 31) / 32;
}

// The code of element i.
STRATASIM_HOST_DEVICE inline int ReadCode(const std::uint32_t* words, long long i, int bits) {
  const long long bit = i * bits;
  const long long w = bit / 32;
  const int off = static_cast<int>(bit % 32);
  std::uint64_t v = words[w] >> off;
  if (off + bits > 32) v |= static_cast<std::uint64_t>(words[w + 1]) << (32 - off);
  return static_cast<int>(v & ((1u << bits) - 1u));
}

// The low and high word parts of code c at element i: word index and the bits to OR into it
// (`high` is 0 unless the code straddles into the next word).
struct CodeBits {
  long long word = 0;
  std::uint32_t low = 0;
  std::uint32_t high = 0;
};
STRATASIM_HOST_DEVICE inline CodeBits PlaceCode(long long i, int bits, int code) {
  const long long bit = i * bits;
  const int off = static_cast<int>(bit % 32);
  const std::uint64_t shifted = static_cast<std::uint64_t>(code) << off;
  return {bit / 32, static_cast<std::uint32_t>(shifted), static_cast<std::uint32_t>(shifted >> 32)};
}

}  // namespace stratasim::kernels::casq

#endif  // STRATASIM_KERNELS_CASQ_HASH_H_
