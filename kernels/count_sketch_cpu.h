// S2Reducer's count sketch on the CPU (Ge et al., arXiv 2110.02140): the reference the CUDA
// kernels (kernels/count_sketch.h) are tested against and the encoder compress-check runs.
//
// A worker's sketch is an r x c FP32 table plus the row bitmap (kernels/row_bitmap.h). Encode
// adds s_k(i, j) * g(i, j) to table[k][h_k(i, j)] for every element of the non-zero rows and
// every sketch row k (O(nnz * r)); the hashes are kernels/sketch_hash.h's. The sketch is linear,
// so the workers' sketches merge by a sum of tables (and an OR of bitmaps): one sum all-reduce.
// Decode estimates each element of the union rows as the median over k of s_k * table[k][h_k];
// rows outside the union are 0.
#ifndef STRATASIM_KERNELS_COUNT_SKETCH_CPU_H_
#define STRATASIM_KERNELS_COUNT_SKETCH_CPU_H_

#include <cstdint>
#include <vector>

#include "core/compression.h"

namespace stratasim::kernels {

// r hash rows, c columns, and the seed every worker shares.
struct CountSketchParams {
  int rows = 1;
  long long columns = 1;
  std::uint64_t seed = 0;
};

// The parameters spec (s2reducer) gives a `shape` gradient: r = sketch_rows, c =
// SketchColumns(spec, shape), seed = spec.seed.
CountSketchParams SketchParamsFor(const CompressionSpec& spec, const GradientShape& shape);

struct CountSketch {
  std::vector<float> table;          // r x c, row-major: table[k * c + bucket]
  std::vector<std::uint8_t> bitmap;  // BitmapBytes(shape.rows)
  // What one worker puts on the wire: 4rc + ceil(n / 8).
  long long WireBytes() const {
    return static_cast<long long>(table.size() * sizeof(float) + bitmap.size());
  }
};

// The sketch of `values` (shape.Elements() of them). Throws Error when the params are out of
// range (r not in [1, 64], c < 1).
CountSketch EncodeCountSketch(const float* values, const GradientShape& shape,
                              const CountSketchParams& params);
// into += other: tables summed, bitmaps ORed. Throws Error when the sizes differ.
void MergeCountSketch(CountSketch& into, const CountSketch& other);
// The estimate of the gradient a (merged) sketch holds: shape.Elements() values.
std::vector<float> DecodeCountSketch(const CountSketch& sketch, const GradientShape& shape,
                                     const CountSketchParams& params);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_COUNT_SKETCH_CPU_H_
