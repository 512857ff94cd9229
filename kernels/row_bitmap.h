// The row bitmap of the row-sparse compressors (OmniReduce, S2Reducer, and the union COO
// decodes): bit i set when row i of a rows x cols gradient has a non-zero value. Bit i is bit
// i % 8 of byte i / 8 (least significant first), so ceil(rows / 8) bytes go on the wire, and a
// little-endian GPU filling 32-bit words with atomicOr writes the same bytes.
#ifndef STRATASIM_KERNELS_ROW_BITMAP_H_
#define STRATASIM_KERNELS_ROW_BITMAP_H_

#include <cstdint>
#include <vector>

#include "core/compression.h"

namespace stratasim::kernels {

// ceil(rows / 8).
long long BitmapBytes(long long rows);
// Whether row `row` of a row-major matrix with `cols` columns has a non-zero value.
bool RowIsNonZero(const float* values, long long row, long long cols);
// The bitmap of `values` (shape.Elements() of them).
std::vector<std::uint8_t> RowBitmap(const float* values, const GradientShape& shape);
// into |= other (the OR all-reduce's merge); both of the same size.
void OrInto(std::vector<std::uint8_t>& into, const std::vector<std::uint8_t>& other);
// The rows whose bit is set, ascending.
std::vector<long long> BitmapRows(const std::vector<std::uint8_t>& bitmap, long long rows);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_ROW_BITMAP_H_
