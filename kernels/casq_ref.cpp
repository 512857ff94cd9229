#include "kernels/casq_ref.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "models/split_mix64.h"

namespace stratasim::kernels::casq {
namespace {

// Lloyd's iterations bound: 1-D k-means on sorted data settles in a few dozen.
constexpr int kLloydIterations = 50;

// Mean of sorted[lo, hi) from prefix sums (prefix[i] = sum of the first i values).
double RangeMean(const std::vector<double>& prefix, long long lo, long long hi) {
  return (prefix[hi] - prefix[lo]) / static_cast<double>(hi - lo);
}

// k centres of the sorted values v[0, size) by Lloyd's algorithm: in 1-D each cluster is a run
// of the sorted values between midpoints of neighbouring centres, so one iteration is k binary
// searches and k range means. Initialised at the (j + 0.5) / k quantiles; an empty run keeps its
// centre.
std::vector<double> KMeans1D(const std::vector<double>& v, long long size, int k,
                             const std::vector<double>& prefix) {
  std::vector<double> c(k);
  for (int j = 0; j < k; ++j) {
    const long long at = static_cast<long long>((j + 0.5) / k * static_cast<double>(size));
    c[j] = v[std::min(at, size - 1)];
  }
  for (int it = 0; it < kLloydIterations; ++it) {
    std::vector<double> next(c);
    long long lo = 0;
    for (int j = 0; j < k; ++j) {
      long long hi = size;
      if (j + 1 < k) {
        const double mid = 0.5 * (c[j] + c[j + 1]);
        hi = std::upper_bound(v.begin(), v.begin() + size, mid) - v.begin();
        hi = std::max(hi, lo);
      }
      if (hi > lo) next[j] = RangeMean(prefix, lo, hi);
      lo = hi;
    }
    std::sort(next.begin(), next.end());
    if (next == c) break;
    c = next;
  }
  return c;
}

// `count` ascending centres for the magnitudes m (sorted ascending): the tail mean outermost,
// k-means on the bulk inside it.
std::vector<double> SignCentres(const std::vector<double>& m, int count) {
  if (m.empty()) return std::vector<double>(count, 0.0);
  std::vector<double> prefix(m.size() + 1, 0.0);
  for (size_t i = 0; i < m.size(); ++i) prefix[i + 1] = prefix[i] + m[i];
  const long long size = static_cast<long long>(m.size());
  if (count == 1) return {RangeMean(prefix, 0, size)};
  if (size == 1) return std::vector<double>(count, m[0]);
  // The tail: magnitudes at or beyond the kTailQuantile quantile, at least one value, and at
  // least one value left for the bulk.
  const long long tail_start = std::clamp(
      static_cast<long long>(std::ceil(kTailQuantile * static_cast<double>(size))), 1LL, size - 1);
  std::vector<double> c = KMeans1D(m, tail_start, count - 1, prefix);
  c.push_back(RangeMean(prefix, tail_start, size));
  return c;
}

}  // namespace

std::vector<float> SampleValues(const std::vector<float>& x, std::uint64_t seed) {
  const long long n = static_cast<long long>(x.size());
  if (n <= kMaxSamples) return x;
  SplitMix64 rng(seed);
  std::vector<float> s(kMaxSamples);
  for (float& v : s) v = x[rng.Below(static_cast<double>(n))];
  return s;
}

std::vector<float> ClusterCentres(const std::vector<float>& samples, int bits) {
  if (bits < 1 || bits > 8) throw Error("casq: bits " + std::to_string(bits) + " not in [1, 8]");
  const int half = (1 << bits) / 2;
  std::vector<double> neg, pos;
  for (float v : samples) {
    if (v < 0) {
      neg.push_back(-static_cast<double>(v));
    } else {
      pos.push_back(v);
    }
  }
  std::sort(neg.begin(), neg.end());
  std::sort(pos.begin(), pos.end());
  const std::vector<double> cn = SignCentres(neg, half);
  const std::vector<double> cp = SignCentres(pos, half);
  std::vector<float> centres;
  centres.reserve(2 * half);
  for (int j = half - 1; j >= 0; --j) centres.push_back(static_cast<float>(-cn[j]));
  for (int j = 0; j < half; ++j) centres.push_back(static_cast<float>(cp[j]));
  return centres;
}

TableLayout LayoutTables(long long total, int bits) {
  const int k = 1 << bits;
  if (bits < 1 || bits > 8 || total < k) {
    throw Error("casq: " + std::to_string(total) + " buckets cannot hold " + std::to_string(k) +
                " cluster tables");
  }
  std::vector<long long> sizes(k);
  if (k == 2) {
    sizes = {total / 2, total - total / 2};
  } else {
    const long long bulk = std::max(1LL, total / (2 * kTailToBulkBuckets + k - 2));
    const long long tails = total - bulk * (k - 2);
    std::fill(sizes.begin(), sizes.end(), bulk);
    sizes[0] = tails / 2;
    sizes[k - 1] = tails - tails / 2;
  }
  TableLayout layout;
  layout.bits = bits;
  layout.offsets.assign(k + 1, 0);
  for (int c = 0; c < k; ++c) layout.offsets[c + 1] = layout.offsets[c] + sizes[c];
  return layout;
}

Encoded Encode(const std::vector<float>& x, const std::vector<float>& centres,
               const TableLayout& layout, std::uint64_t hash_seed) {
  const int bits = layout.bits;
  const int k = 1 << bits;
  if (static_cast<int>(centres.size()) != k) {
    throw Error("casq: " + std::to_string(centres.size()) + " centres for " + std::to_string(bits) +
                "-bit codes (needs " + std::to_string(k) + ")");
  }
  const long long n = static_cast<long long>(x.size());
  Encoded e;
  e.centres = centres;
  e.codes.assign(CodeWords(n, bits), 0u);
  std::vector<double> sums(layout.Buckets(), 0.0);
  std::vector<long long> counts(layout.Buckets(), 0);
  for (long long i = 0; i < n; ++i) {
    const int c = NearestCentre(x[i], centres.data(), k);
    const CodeBits cb = PlaceCode(i, bits, c);
    e.codes[cb.word] |= cb.low;
    if (cb.high != 0) e.codes[cb.word + 1] |= cb.high;
    const long long b = Bucket(layout, c, i, hash_seed);
    sums[b] += x[i];
    ++counts[b];
  }
  e.means.assign(layout.Buckets(), 0.0f);
  for (long long b = 0; b < layout.Buckets(); ++b) {
    if (counts[b] > 0) e.means[b] = static_cast<float>(sums[b] / static_cast<double>(counts[b]));
  }
  return e;
}

std::vector<float> Decode(const std::vector<Encoded>& workers, long long n,
                          const TableLayout& layout, std::uint64_t hash_seed) {
  const int bits = layout.bits;
  for (const Encoded& w : workers) {
    if (static_cast<long long>(w.codes.size()) != CodeWords(n, bits) ||
        static_cast<long long>(w.means.size()) != layout.Buckets()) {
      throw Error("casq: a worker's payload does not match " + std::to_string(n) +
                  " elements and " + std::to_string(layout.Buckets()) + " buckets");
    }
  }
  std::vector<float> sum(n, 0.0f);
  for (const Encoded& w : workers) {
    for (long long i = 0; i < n; ++i) {
      const int c = ReadCode(w.codes.data(), i, bits);
      sum[i] += w.means[Bucket(layout, c, i, hash_seed)];
    }
  }
  return sum;
}

}  // namespace stratasim::kernels::casq
