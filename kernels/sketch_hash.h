// The hash functions of S2Reducer's count sketch (Ge et al., arXiv 2110.02140), in one header
// that both the CPU reference (kernels/count_sketch_cpu.cpp) and the CUDA kernels
// (kernels/count_sketch.cu) compile, so both place every element in the same bucket with the
// same sign: a GPU sketch and its CPU reference differ only by the order of float additions.
//
// Element (i, j) of a rows x cols gradient is the key i * cols + j. Sketch row k hashes it with
// its own key, derived from the shared seed, through SplitMix64's finaliser (Steele et al. 2014,
// "Fast Splittable Pseudorandom Number Generators"): a bijection of 64-bit words, so distinct
// elements never share a hash within a row, and its avalanche makes the low bits (the bucket,
// hash mod c) and the top bit (the sign) look independent. The authors' code (CSVec in
// Panlichen/Sparse_Sketch_Reducer) draws its hashes from a polynomial modulo 2^61 - 1 instead;
// any hash that is the same on every worker keeps the sketch mergeable by a sum.
#ifndef STRATASIM_KERNELS_SKETCH_HASH_H_
#define STRATASIM_KERNELS_SKETCH_HASH_H_

#include <cstdint>

#ifndef STRATASIM_HOST_DEVICE
#ifdef __CUDACC__
#define STRATASIM_HOST_DEVICE __host__ __device__
#else
#define STRATASIM_HOST_DEVICE
#endif
#endif

namespace stratasim::kernels::sketch {

STRATASIM_HOST_DEVICE inline std::uint64_t Mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The key of sketch row k under `seed`: the golden-ratio multiple of k + 1 keeps rows apart
// for the same seed (as SplitMix64's own stream increment does).
STRATASIM_HOST_DEVICE inline std::uint64_t RowKey(std::uint64_t seed, int k) {
  return Mix64(seed ^ (0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(k) + 1)));
}

// The hash of element `element` (i * cols + j) in the row keyed `row_key`.
STRATASIM_HOST_DEVICE inline std::uint64_t ElementHash(std::uint64_t row_key,
                                                       std::uint64_t element) {
  return Mix64(element ^ row_key);
}

// Bucket in [0, columns) from the 63 low bits; sign +1 or -1 from the top bit.
STRATASIM_HOST_DEVICE inline std::uint64_t Bucket(std::uint64_t hash, std::uint64_t columns) {
  return (hash & 0x7fffffffffffffffULL) % columns;
}
STRATASIM_HOST_DEVICE inline float Sign(std::uint64_t hash) {
  return (hash >> 63) != 0 ? -1.0f : 1.0f;
}

// The median of v[0..n) (n >= 1), reordering v: the middle value for odd n, the mean of the two
// middle values for even n. Insertion sort: n is the sketch's r, at most 64
// (CheckCompressionSpec), and the same steps on host and device give the same float.
STRATASIM_HOST_DEVICE inline float MedianInPlace(float* v, int n) {
  for (int a = 1; a < n; ++a) {
    const float x = v[a];
    int b = a - 1;
    while (b >= 0 && v[b] > x) {
      v[b + 1] = v[b];
      --b;
    }
    v[b + 1] = x;
  }
  if (n % 2 == 1) return v[n / 2];
  return (v[n / 2 - 1] + v[n / 2]) * 0.5f;
}

// The most sketch rows any spec allows (CheckCompressionSpec): decoders keep r estimates of
// one element in a fixed-size array.
inline constexpr int kMaxSketchRows = 64;

}  // namespace stratasim::kernels::sketch

#endif  // STRATASIM_KERNELS_SKETCH_HASH_H_
