#include "kernels/sparse_encoding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
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
  std::vector<long long> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), 0LL);
  const auto larger = [values](long long a, long long b) {
    const float fa = std::fabs(values[a]), fb = std::fabs(values[b]);
    return fa > fb || (fa == fb && a < b);
  };
  std::nth_element(idx.begin(), idx.begin() + (k - 1), idx.end(), larger);
  idx.resize(static_cast<std::size_t>(k));
  std::sort(idx.begin(), idx.end());
  return idx;
}

}  // namespace stratasim::kernels
