// The quant compressors of core/compression.h (see kernels/compressor.h).
#ifndef STRATASIM_KERNELS_QUANT_COMPRESSORS_H_
#define STRATASIM_KERNELS_QUANT_COMPRESSORS_H_

#include <memory>

#include "kernels/compressor.h"

namespace stratasim::kernels {

std::unique_ptr<Compressor> MakeQuantCompressor(const CompressionSpec& spec);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_QUANT_COMPRESSORS_H_
