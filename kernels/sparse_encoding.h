// Pieces of the index-carrying encodings (COO rows, top-k elements): fixed-width little-endian
// indices as they go on the wire, the check that an index width can name every position, and
// the top-k selection.
#ifndef STRATASIM_KERNELS_SPARSE_ENCODING_H_
#define STRATASIM_KERNELS_SPARSE_ENCODING_H_

#include <cstdint>
#include <vector>

namespace stratasim::kernels {

// Throws Error unless `positions` distinct values (0 .. positions - 1) fit in `index_bytes`
// bytes, e.g. "coo: 4294967297 row indices do not fit in 4-byte indices (index_bytes = 4); use
// index_bytes = 8".
void CheckIndexWidth(const char* method, long long positions, const char* what, int index_bytes);

// Writes / reads `index` as `index_bytes` (4 or 8) little-endian bytes at `at`.
void PutIndex(std::uint8_t* at, std::uint64_t index, int index_bytes);
std::uint64_t GetIndex(const std::uint8_t* at, int index_bytes);

// The positions of the k (1 <= k <= n) largest |values[i]|, ascending. Ties in magnitude go to
// the smaller position, so the choice does not depend on the selection algorithm.
std::vector<long long> TopKIndices(const float* values, long long n, long long k);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_SPARSE_ENCODING_H_
