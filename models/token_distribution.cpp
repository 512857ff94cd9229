#include "models/token_distribution.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "models/split_mix64.h"

namespace stratasim {

TokenDistribution::TokenDistribution(int vocabulary, double zipf_exponent)
    : vocabulary_(vocabulary), exponent_(zipf_exponent) {
  if (vocabulary < 1) {
    throw Error("token distribution over " + std::to_string(vocabulary) +
                " ids: the vocabulary must be >= 1");
  }
  if (!(zipf_exponent >= 0) || !std::isfinite(zipf_exponent)) {
    throw Error("token distribution: zipf exponent " + std::to_string(zipf_exponent) +
                " must be finite and >= 0");
  }
  if (exponent_ == 0) return;
  cumulative_.resize(vocabulary_);
  double sum = 0;
  for (int i = 0; i < vocabulary_; ++i) {
    sum += std::pow(static_cast<double>(i) + 1, -exponent_);
    cumulative_[i] = sum;
  }
  for (double& c : cumulative_) c /= sum;
  cumulative_.back() = 1.0;
}

TokenDistribution TokenDistribution::Of(const ModelSpec& spec) {
  return TokenDistribution(spec.vocabulary,
                           spec.token_distribution == "uniform" ? 0.0 : spec.zipf_exponent);
}

double TokenDistribution::Probability(int id) const {
  if (cumulative_.empty()) return 1.0 / vocabulary_;
  return id == 0 ? cumulative_[0] : cumulative_[id] - cumulative_[id - 1];
}

int TokenDistribution::Draw(SplitMix64& rng) const {
  if (cumulative_.empty()) return static_cast<int>(rng.Below(vocabulary_));
  // Inverse transform: the first id whose cumulative probability exceeds u.
  const double u = rng.Unit();
  const int id = static_cast<int>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) -
                                  cumulative_.begin());
  return std::min(id, vocabulary_ - 1);
}

long long TokenDistribution::DistinctIds(long long draws, std::uint64_t seed) const {
  SplitMix64 rng(seed);
  std::vector<bool> seen(vocabulary_, false);
  long long distinct = 0;
  for (long long n = 0; n < draws; ++n) {
    const int id = Draw(rng);
    if (!seen[id]) {
      seen[id] = true;
      ++distinct;
    }
  }
  return distinct;
}

std::vector<std::uint32_t> TokenDistribution::IdCounts(long long draws, std::uint64_t seed) const {
  if (draws < 0 || draws > 0xffffffffLL) {
    throw Error("token distribution: " + std::to_string(draws) +
                " draws must be in [0, 2^32) to be counted per id");
  }
  SplitMix64 rng(seed);
  std::vector<std::uint32_t> counts(vocabulary_, 0);
  for (long long n = 0; n < draws; ++n) ++counts[Draw(rng)];
  return counts;
}

double TokenDistribution::ExpectedDistinctIds(long long draws) const {
  double expected = 0;
  for (int i = 0; i < vocabulary_; ++i) {
    // 1 - (1 - p)^n without cancellation for small p.
    expected += -std::expm1(static_cast<double>(draws) * std::log1p(-Probability(i)));
  }
  return expected;
}

std::uint64_t BatchSeed(std::uint64_t seed, int replica, int iteration) {
  // Distinct odd multipliers keep (replica, iteration) pairs apart; SplitMix64 mixes the rest.
  return seed ^ (0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(replica) + 1)) ^
         (0xc2b2ae3d27d4eb4fULL * (static_cast<std::uint64_t>(iteration) + 1));
}

}  // namespace stratasim
