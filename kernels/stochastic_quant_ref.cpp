#include "kernels/stochastic_quant_ref.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/compression.h"
#include "core/error.h"
#include "models/split_mix64.h"

namespace stratasim::kernels::reference {
namespace {

// Codes of `bits` (<= 8) bits back to back in a little-endian byte stream, as QSGD's and
// TernGrad's wire formats pack them; ceil(n * bits / 8) bytes.
class BitWriter {
 public:
  BitWriter(long long n, int bits) : bits_(bits), bytes_((n * bits + 7) / 8, 0) {}
  void Put(long long i, unsigned code) {
    const long long bit = i * bits_;
    const unsigned v = code << (bit % 8);
    bytes_[bit / 8] |= static_cast<std::uint8_t>(v);
    if ((bit % 8) + bits_ > 8) bytes_[bit / 8 + 1] |= static_cast<std::uint8_t>(v >> 8);
  }
  std::vector<std::uint8_t> Take() { return std::move(bytes_); }

 private:
  int bits_;
  std::vector<std::uint8_t> bytes_;
};

unsigned GetBits(const std::vector<std::uint8_t>& bytes, long long i, int bits) {
  const long long bit = i * bits;
  unsigned v = bytes[bit / 8] >> (bit % 8);
  if ((bit % 8) + bits > 8) v |= static_cast<unsigned>(bytes[bit / 8 + 1]) << (8 - bit % 8);
  return v & ((1u << bits) - 1u);
}

long long Buckets(long long n, long long bucket) { return (n + bucket - 1) / bucket; }

void CheckBucket(long long bucket) {
  if (bucket < 1) throw Error("stochastic quantizer: bucket " + std::to_string(bucket) + " < 1");
}

// Elements the packed codes hold, checked against the scales and the sum they decode into.
long long CheckDecode(const StochasticCodes& codes, long long bucket, int bits,
                      const std::vector<float>& sum) {
  CheckBucket(bucket);
  const long long n = static_cast<long long>(sum.size());
  if (static_cast<long long>(codes.packed.size()) != (n * bits + 7) / 8 ||
      static_cast<long long>(codes.scales.size()) != Buckets(n, bucket)) {
    throw Error("stochastic quantizer: the payload does not hold " + std::to_string(n) +
                " elements");
  }
  return n;
}

}  // namespace

std::uint64_t RoundingSeed(std::uint64_t seed, int worker, int iteration) {
  // Distinct odd multipliers keep (worker, iteration) pairs apart; SplitMix64 mixes the rest.
  return seed ^ (0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(worker) + 1)) ^
         (0xc2b2ae3d27d4eb4fULL * (static_cast<std::uint64_t>(iteration) + 1));
}

StochasticCodes QsgdEncode(const std::vector<float>& x, int levels, long long bucket,
                           std::uint64_t rounding_seed) {
  CheckBucket(bucket);
  if (levels < 1 || levels > 127) throw Error("qsgd: levels must be in [1, 127]");
  const long long n = static_cast<long long>(x.size());
  const int bits = QsgdBitsPerElement(levels);
  const int level_bits = bits - 1;
  BitWriter out(n, bits);
  StochasticCodes codes;
  codes.scales.resize(Buckets(n, bucket));
  SplitMix64 rng(rounding_seed);
  for (long long b = 0; b * bucket < n; ++b) {
    const long long lo = b * bucket, hi = std::min(n, lo + bucket);
    double sq = 0;
    for (long long i = lo; i < hi; ++i) sq += static_cast<double>(x[i]) * x[i];
    const float norm = static_cast<float>(std::sqrt(sq));
    codes.scales[b] = norm;
    for (long long i = lo; i < hi; ++i) {
      const double u = rng.Unit();  // drawn for every element, so streams stay aligned
      if (norm == 0) continue;
      const double r = std::fabs(static_cast<double>(x[i])) / norm * levels;
      const double fl = std::floor(r);
      const unsigned level =
          std::min(static_cast<unsigned>(levels), static_cast<unsigned>(fl) + (u < r - fl));
      const unsigned sign = x[i] < 0 ? 1u : 0u;
      out.Put(i, (sign << level_bits) | level);
    }
  }
  codes.packed = out.Take();
  return codes;
}

void QsgdDecodeAdd(const StochasticCodes& codes, int levels, long long bucket,
                   std::vector<float>& sum) {
  const int bits = QsgdBitsPerElement(levels);
  const long long n = CheckDecode(codes, bucket, bits, sum);
  const int level_bits = bits - 1;
  for (long long i = 0; i < n; ++i) {
    const unsigned code = GetBits(codes.packed, i, bits);
    const float level = static_cast<float>(code & ((1u << level_bits) - 1u));
    const float v = codes.scales[i / bucket] * (level / static_cast<float>(levels));
    sum[i] += (code >> level_bits) ? -v : v;
  }
}

StochasticCodes TernGradEncode(const std::vector<float>& x, long long bucket,
                               std::uint64_t rounding_seed) {
  CheckBucket(bucket);
  const long long n = static_cast<long long>(x.size());
  BitWriter out(n, 2);
  StochasticCodes codes;
  codes.scales.resize(Buckets(n, bucket));
  SplitMix64 rng(rounding_seed);
  for (long long b = 0; b * bucket < n; ++b) {
    const long long lo = b * bucket, hi = std::min(n, lo + bucket);
    float scale = 0;
    for (long long i = lo; i < hi; ++i) scale = std::max(scale, std::fabs(x[i]));
    codes.scales[b] = scale;
    for (long long i = lo; i < hi; ++i) {
      const double u = rng.Unit();
      if (scale == 0) continue;
      // Code 0: zero; 1: +scale; 2: -scale.
      if (u < std::fabs(static_cast<double>(x[i])) / scale) out.Put(i, x[i] < 0 ? 2u : 1u);
    }
  }
  codes.packed = out.Take();
  return codes;
}

void TernGradDecodeAdd(const StochasticCodes& codes, long long bucket, std::vector<float>& sum) {
  const long long n = CheckDecode(codes, bucket, 2, sum);
  for (long long i = 0; i < n; ++i) {
    const unsigned code = GetBits(codes.packed, i, 2);
    if (code == 1) sum[i] += codes.scales[i / bucket];
    if (code == 2) sum[i] -= codes.scales[i / bucket];
  }
}

}  // namespace stratasim::kernels::reference
