#include "kernels/sparse_encoding.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>

#include "core/error.h"

namespace stratasim::kernels {

void CheckIndexWidth(const char* method, long long positions, const char* what, int index_bytes) {
  if (index_bytes != 4 && index_bytes != 8) {
    throw Error(std::string(method) + ": index_bytes = " + std::to_string(index_bytes) +
                ": must be 4 or 8");
  }
  // 4-byte indices name 0 .. 2^32 - 1.
  if (index_bytes == 4 && positions > (1LL << 32)) {
    throw Error(std::string(method) + ": " + std::to_string(positions) + " " + what +
                " do not fit in 4-byte indices (index_bytes = 4); use index_bytes = 8");
  }
}

void PutIndex(std::uint8_t* at, std::uint64_t index, int index_bytes) {
  if (index_bytes == 4) {
    const auto v = static_cast<std::uint32_t>(index);
    std::memcpy(at, &v, sizeof(v));
  } else {
    std::memcpy(at, &index, sizeof(index));
  }
}

std::uint64_t GetIndex(const std::uint8_t* at, int index_bytes) {
  if (index_bytes == 4) {
    std::uint32_t v;
    std::memcpy(&v, at, sizeof(v));
    return v;
  }
  std::uint64_t v;
  std::memcpy(&v, at, sizeof(v));
  return v;
}

std::vector<long long> TopKIndices(const float* values, long long n, long long k) {
  if (k < 1 || k > n) {
    throw Error("top-k: k = " + std::to_string(k) + " of " + std::to_string(n) +
                " elements: need 1 <= k <= n");
  }
  // The k-th largest magnitude by selection over a copy of the magnitudes (contiguous floats:
  // several times faster than selecting positions through a comparator), then one ascending
  // pass keeps every larger element and the first ties.
  const Eigen::Map<const Eigen::ArrayXf> x(values, n);
  std::vector<float> mag(static_cast<std::size_t>(n));
  Eigen::Map<Eigen::ArrayXf>(mag.data(), n) = x.abs();
  std::nth_element(mag.begin(), mag.begin() + (k - 1), mag.end(), std::greater<float>());
  const float threshold = mag[k - 1];
  long long ties = k - (x.abs() > threshold).count();
  std::vector<long long> idx;
  idx.reserve(static_cast<std::size_t>(k));
  for (long long i = 0; i < n; ++i) {
    const float m = std::fabs(values[i]);
    if (m > threshold) {
      idx.push_back(i);
    } else if (m == threshold && ties > 0) {
      idx.push_back(i);
      --ties;
    }
  }
  return idx;
}

}  // namespace stratasim::kernels
