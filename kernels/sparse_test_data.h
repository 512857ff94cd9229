// Test inputs for the sparse compressors: embedding-table gradients of a batch whose token ids
// follow a Zipf law (a few ids take most of the tokens, as in natural text), so rows are
// non-zero for the batch's ids only and the popular rows are shared between workers.
//
// Values are multiples of 1/32 of at most 2 in magnitude: sums of a few tens of thousands of them
// are exact in FP32, so sums in any order (a sketch's buckets, a GPU's atomics) agree bit for
// bit and tests can compare exactly.
#ifndef STRATASIM_KERNELS_SPARSE_TEST_DATA_H_
#define STRATASIM_KERNELS_SPARSE_TEST_DATA_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/compressor.h"
#include "models/split_mix64.h"

namespace stratasim::kernels::testing {

// `workers` gradients of a vocab x cols embedding, each the sum over `tokens` ids drawn from
// Zipf(`exponent`) of a random row of values in [-2, 2) (1/32 steps).
inline WorkerGradients ZipfEmbeddingGradients(int workers, long long vocab, long long cols,
                                              int tokens, double exponent, std::uint64_t seed) {
  std::vector<double> cdf(static_cast<std::size_t>(vocab));
  double total = 0;
  for (long long i = 0; i < vocab; ++i) {
    total += 1.0 / std::pow(static_cast<double>(i + 1), exponent);
    cdf[i] = total;
  }
  WorkerGradients g;
  g.shape = {vocab, cols};
  SplitMix64 rng(seed);
  for (int w = 0; w < workers; ++w) {
    std::vector<float> grad(static_cast<std::size_t>(vocab * cols), 0.0f);
    for (int t = 0; t < tokens; ++t) {
      const double u = rng.Unit() * total;
      const long long id =
          std::min<long long>(vocab - 1, std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
      for (long long j = 0; j < cols; ++j) {
        const auto step = static_cast<int>(rng.Next() >> 57) - 64;  // [-64, 64)
        grad[id * cols + j] += static_cast<float>(step) / 32.0f;
      }
    }
    g.workers.push_back(std::move(grad));
  }
  return g;
}

// The elementwise sum of the workers' gradients, in worker order.
inline std::vector<float> SumOf(const WorkerGradients& g) {
  std::vector<float> sum(g.workers[0].size(), 0.0f);
  for (const std::vector<float>& w : g.workers) {
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += w[i];
  }
  return sum;
}

}  // namespace stratasim::kernels::testing

#endif  // STRATASIM_KERNELS_SPARSE_TEST_DATA_H_
