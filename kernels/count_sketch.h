// S2Reducer's count sketch on the GPU (Ge et al., arXiv 2110.02140): the encode scatters every
// non-zero element of a worker's gradient into the r x c table with atomicAdd and sets its
// row's bit with atomicOr; the decode takes, for each element of a row whose bit is set, the
// median over the r rows of sign * table[bucket]. Buckets and signs come from
// kernels/sketch_hash.h, as in the CPU reference (kernels/count_sketch_cpu.h): the tables differ
// only by the order of the float additions, and the same table decodes to the same bits.
#ifndef STRATASIM_KERNELS_COUNT_SKETCH_H_
#define STRATASIM_KERNELS_COUNT_SKETCH_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/count_sketch_cpu.h"

namespace stratasim::kernels {

// 32-bit words of a rows-bit bitmap on the device: ceil(rows / 32). Their first ceil(rows / 8)
// bytes are kernels/row_bitmap.h's wire bitmap (little-endian words, bit i of word i / 32).
long long BitmapWords(long long rows);

// Adds the sketch of `values` (device, rows x cols FP32, row-major) into `table` (device,
// params.rows x params.columns FP32) and ORs its row bitmap into `bitmap_words` (device,
// BitmapWords(rows) words). The caller zeroes both first; encoding every worker into the same
// buffers gives their merged sketch, as the sum all-reduce does. Throws Error for params out of
// range or an empty shape.
void CountSketchEncode(const float* values, long long rows, long long cols,
                       const CountSketchParams& params, float* table, std::uint32_t* bitmap_words,
                       cudaStream_t stream);

// out (device, rows x cols) = the estimate from a (merged) sketch: the median over the r rows
// for the rows whose bit is set, 0 elsewhere.
void CountSketchDecode(const float* table, const std::uint32_t* bitmap_words, long long rows,
                       long long cols, const CountSketchParams& params, float* out,
                       cudaStream_t stream);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_COUNT_SKETCH_H_
