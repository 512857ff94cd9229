#include "kernels/sparse_compressors.h"

#include "core/error.h"

namespace stratasim::kernels {

std::unique_ptr<Compressor> MakeSparseCompressor(const CompressionSpec& spec) {
  throw Error("compressor " + std::string(ToString(spec.method)) + " is not built yet");
}

}  // namespace stratasim::kernels
