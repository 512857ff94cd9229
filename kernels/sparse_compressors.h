// The sparse compressors of core/compression.h (see kernels/compressor.h).
#ifndef STRATASIM_KERNELS_SPARSE_COMPRESSORS_H_
#define STRATASIM_KERNELS_SPARSE_COMPRESSORS_H_

#include <memory>

#include "kernels/compressor.h"

namespace stratasim::kernels {

std::unique_ptr<Compressor> MakeSparseCompressor(const CompressionSpec& spec);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_SPARSE_COMPRESSORS_H_
