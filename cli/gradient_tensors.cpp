#include "cli/gradient_tensors.h"

#include <cmath>

#include "core/error.h"
#include "models/split_mix64.h"

namespace stratasim {
namespace {

// Separate streams for a worker's values, positions and noise, apart from its token ids
// (BatchSeed itself): fixed odd constants (hex digits of pi), mixed in by SplitMix64.
constexpr std::uint64_t kValueStream = 0x243f6a8885a308d3ULL;
constexpr std::uint64_t kDenseStream = 0x13198a2e03707344ULL;
constexpr std::uint64_t kNoiseStream = 0xa4093822299f31d0ULL;

SplitMix64 Stream(std::uint64_t seed, int worker, std::uint64_t stream) {
  return SplitMix64(SplitMix64(BatchSeed(seed, worker, 0) ^ stream).Next());
}

double Normal(SplitMix64& rng) {
  const double u1 = 1.0 - rng.Unit();  // (0, 1]: log is finite
  const double u2 = rng.Unit();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double Laplace(SplitMix64& rng) {
  const double u = rng.Unit() - 0.5;      // [-0.5, 0.5)
  const double b = 1.0 / std::sqrt(2.0);  // variance 2 b^2 = 1
  const double magnitude = -b * std::log(1.0 - 2.0 * std::fabs(u));
  return u < 0 ? -magnitude : magnitude;
}

double Draw(ValueDistribution d, SplitMix64& rng) {
  return d == ValueDistribution::kNormal ? Normal(rng) : Laplace(rng);
}

}  // namespace

std::optional<ValueDistribution> ParseValueDistribution(const std::string& text) {
  if (text == "normal") return ValueDistribution::kNormal;
  if (text == "laplace") return ValueDistribution::kLaplace;
  return std::nullopt;
}

std::string ToString(ValueDistribution d) {
  return d == ValueDistribution::kNormal ? "normal" : "laplace";
}

kernels::WorkerGradients EmbeddingGradients(const TokenDistribution& tokens, long long cols,
                                            long long draws_per_worker, int workers,
                                            std::uint64_t seed, double scale) {
  kernels::WorkerGradients g;
  g.shape = {tokens.vocabulary(), cols};
  for (int w = 0; w < workers; ++w) {
    const std::vector<std::uint32_t> counts =
        tokens.IdCounts(draws_per_worker, BatchSeed(seed, w, 0));
    SplitMix64 rng = Stream(seed, w, kValueStream);
    std::vector<float> values(static_cast<size_t>(g.shape.Elements()), 0.0f);
    for (long long r = 0; r < g.shape.rows; ++r) {
      if (counts[r] == 0) continue;
      const double row_scale = scale * std::sqrt(static_cast<double>(counts[r]));
      for (long long c = 0; c < cols; ++c) {
        values[r * cols + c] = static_cast<float>(row_scale * Normal(rng));
      }
    }
    g.workers.push_back(std::move(values));
  }
  return g;
}

kernels::WorkerGradients DenseGradients(long long elements, ValueDistribution distribution,
                                        double density, int workers, std::uint64_t seed,
                                        double scale) {
  kernels::WorkerGradients g;
  g.shape = {elements, 1};
  for (int w = 0; w < workers; ++w) {
    SplitMix64 rng = Stream(seed, w, kDenseStream);
    std::vector<float> values(static_cast<size_t>(elements), 0.0f);
    for (float& v : values) {
      // density 1: every element, without spending a draw on the position.
      if (density < 1 && rng.Unit() >= density) continue;
      v = static_cast<float>(scale * Draw(distribution, rng));
    }
    g.workers.push_back(std::move(values));
  }
  return g;
}

kernels::WorkerGradients ArrayGradients(const std::vector<NpyArray>& arrays, int workers,
                                        double noise, std::uint64_t seed) {
  if (arrays.empty()) throw Error("no arrays given");
  kernels::WorkerGradients g;
  g.shape = {arrays[0].rows, arrays[0].cols};
  for (size_t i = 1; i < arrays.size(); ++i) {
    if (arrays[i].rows != g.shape.rows || arrays[i].cols != g.shape.cols) {
      throw Error("array " + std::to_string(i + 1) + " is " + std::to_string(arrays[i].rows) +
                  " x " + std::to_string(arrays[i].cols) + ", array 1 is " +
                  std::to_string(g.shape.rows) + " x " + std::to_string(g.shape.cols) +
                  ": every worker's array must have the same shape");
    }
  }
  if (arrays.size() > 1) {
    if (static_cast<int>(arrays.size()) != workers) {
      throw Error(std::to_string(arrays.size()) + " arrays for " + std::to_string(workers) +
                  " workers: give one array per worker, or one for all of them");
    }
    for (const NpyArray& a : arrays) g.workers.push_back(a.values);
    return g;
  }
  const std::vector<float>& a = arrays[0].values;
  double sum_sq = 0;
  long long nonzero = 0;
  for (float v : a) {
    if (v != 0.0f) {
      sum_sq += static_cast<double>(v) * v;
      ++nonzero;
    }
  }
  const double sigma = nonzero > 0 ? noise * std::sqrt(sum_sq / static_cast<double>(nonzero)) : 0;
  for (int w = 0; w < workers; ++w) {
    SplitMix64 rng = Stream(seed, w, kNoiseStream);
    std::vector<float> values = a;
    if (sigma > 0) {
      for (float& v : values) {
        if (v != 0.0f) v = static_cast<float>(v + sigma * Normal(rng));
      }
    }
    g.workers.push_back(std::move(values));
  }
  return g;
}

}  // namespace stratasim
