// The sparse compressors of core/compression.h (see kernels/compressor.h): coo, omnireduce and
// s2reducer exploit row sparsity (an embedding gradient's non-zero rows are the batch's ids),
// topk keeps the largest elements of any gradient.
//
// Each builds the buffers a worker would send (COO blocks, bitmaps, union rows, count sketches,
// top-k pairs), exchanges them as the collective would (sum or OR for an all-reduce,
// concatenation of equal blocks for an all-gather) and decodes the sum; the payloads it reports
// are those buffers' sizes.
#ifndef STRATASIM_KERNELS_SPARSE_COMPRESSORS_H_
#define STRATASIM_KERNELS_SPARSE_COMPRESSORS_H_

#include <memory>

#include "kernels/compressor.h"

namespace stratasim::kernels {

// coo, omnireduce, s2reducer or topk; Error for any other method.
std::unique_ptr<Compressor> MakeSparseCompressor(const CompressionSpec& spec);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_SPARSE_COMPRESSORS_H_
