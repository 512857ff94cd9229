// CASQ on the CPU (Cluster-Aware Sketch Quantization, CLUSTER 2021; the authors' code
// LSTM/CASQ, LSSkernel.cu, summarised in /work/shared/notes/comm-compression.md): the
// reference the CUDA kernels (kernels/casq.h) are tested against and the kernels compress-check
// runs (kernels/quant_compressors.cpp).
//
// One worker's step: cluster a sample of its gradient values into K = 2^q centres; encode every
// element as the q-bit code of its nearest centre, and add the value into a hash table of its
// cluster (bucket = BKDR hash of the index mod the cluster's table size), whose bucket means
// are sent. Decoding reads, per worker, the element's code, hashes its index into that
// cluster's table and takes the bucket mean; the estimate of the sum adds them over workers.
// Codes of different workers do not add, so the payload (codes + tables + centres) is
// all-gathered.
#ifndef STRATASIM_KERNELS_CASQ_REF_H_
#define STRATASIM_KERNELS_CASQ_REF_H_

#include <cstdint>
#include <vector>

#include "kernels/casq_hash.h"

namespace stratasim::kernels::casq {

// The authors cluster at most 100,000 sampled gradient values.
inline constexpr long long kMaxSamples = 100000;
// The tail clusters hold the values beyond the 95th percentile of the positive magnitudes and
// the 5th percentile of the negative values (the authors' clustering).
inline constexpr double kTailQuantile = 0.95;
// Buckets of a tail table per bucket of a bulk table: the authors' q = 2 tables hold
// [500000, 200, 200, 500000] buckets (tails large, bulk small), i.e. 2500 : 1.
inline constexpr long long kTailToBulkBuckets = 2500;

// K = 2^bits ascending centres from `samples` values: half the centres for the negative values,
// half for the rest (zero counts as positive). Per sign with K/2 >= 2 centres: the outermost is
// the mean of the tail (magnitudes beyond the kTailQuantile quantile), the other K/2 - 1 come
// from 1-D k-means (Lloyd, initialised at quantiles) on the remaining bulk; with K/2 = 1 the one
// centre is the mean of that sign's values. A sign without values gets centres 0.
std::vector<float> ClusterCentres(const std::vector<float>& samples, int bits);

// Up to kMaxSamples values of x drawn uniformly with replacement (all of x when it has no more),
// from SplitMix64 seeded with `seed`.
std::vector<float> SampleValues(const std::vector<float>& x, std::uint64_t seed);

// How `total` buckets (at least 2^bits) are shared among the 2^bits cluster tables: each bulk
// table gets floor(total / (2 * kTailToBulkBuckets + K - 2)) buckets (at least 1), the two tail
// tables (codes 0 and K - 1) share the rest, the upper one taking the odd bucket; with q = 1
// both clusters are tails. total = 1,000,400 at q = 2 gives the authors' [500000, 200, 200,
// 500000]. offsets has K + 1 entries: table c holds buckets [offsets[c], offsets[c + 1]).
struct TableLayout {
  int bits = 0;
  std::vector<long long> offsets;
  long long Buckets() const { return offsets.back(); }
  long long Size(int c) const { return offsets[c + 1] - offsets[c]; }
};
TableLayout LayoutTables(long long total, int bits);

// One worker's payload: what it all-gathers.
struct Encoded {
  std::vector<std::uint32_t> codes;  // CodeWords(n, bits) words
  std::vector<float> means;          // layout.Buckets() bucket means (0 for empty buckets)
  std::vector<float> centres;        // the K centres the codes index
};

// The bucket of element `index` with code c: the cluster's offset plus the BKDR hash of the
// index modulo the cluster's table size.
inline long long Bucket(const TableLayout& layout, int c, long long index, std::uint64_t seed) {
  return BucketIn(layout.offsets[c], layout.offsets[c + 1], seed, index);
}

// Encodes x with the given ascending centres (layout.bits bits each). Bucket sums accumulate in
// double and are divided by their counts once.
Encoded Encode(const std::vector<float>& x, const std::vector<float>& centres,
               const TableLayout& layout, std::uint64_t hash_seed);

// The sum over workers of each element's bucket mean, added in worker order in FP32 (as the CUDA
// decode does). Every worker's payload must use `layout` and hold n codes.
std::vector<float> Decode(const std::vector<Encoded>& workers, long long n,
                          const TableLayout& layout, std::uint64_t hash_seed);

}  // namespace stratasim::kernels::casq

#endif  // STRATASIM_KERNELS_CASQ_REF_H_
