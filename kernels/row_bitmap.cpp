#include "kernels/row_bitmap.h"

#include <Eigen/Core>

namespace stratasim::kernels {

long long BitmapBytes(long long rows) { return (rows + 7) / 8; }

bool RowIsNonZero(const float* values, long long row, long long cols) {
  return (Eigen::Map<const Eigen::ArrayXf>(values + row * cols, cols) != 0.0f).any();
}

std::vector<std::uint8_t> RowBitmap(const float* values, const GradientShape& shape) {
  std::vector<std::uint8_t> bitmap(BitmapBytes(shape.rows), 0);
  for (long long i = 0; i < shape.rows; ++i) {
    if (RowIsNonZero(values, i, shape.cols))
      bitmap[i / 8] |= static_cast<std::uint8_t>(1u << (i % 8));
  }
  return bitmap;
}

void OrInto(std::vector<std::uint8_t>& into, const std::vector<std::uint8_t>& other) {
  for (std::size_t b = 0; b < into.size() && b < other.size(); ++b) into[b] |= other[b];
}

std::vector<long long> BitmapRows(const std::vector<std::uint8_t>& bitmap, long long rows) {
  std::vector<long long> out;
  for (long long i = 0; i < rows; ++i) {
    if ((bitmap[i / 8] >> (i % 8)) & 1u) out.push_back(i);
  }
  return out;
}

}  // namespace stratasim::kernels
