#include "kernels/quant_compressors.h"

#include "core/error.h"

namespace stratasim::kernels {

std::unique_ptr<Compressor> MakeQuantCompressor(const CompressionSpec& spec) {
  throw Error("compressor " + std::string(ToString(spec.method)) + " is not built yet");
}

}  // namespace stratasim::kernels
