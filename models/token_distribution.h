// The token ids of a batch, for a model whose embedding gradient is sparse (ModelSpec::
// sparse_embedding; docs/models.md, "Sparse embedding"): the gradient of the token table has one
// non-zero row per distinct id of the batch, so the bytes a sparse exchange moves follow the
// batch's distinct ids.
//
// Ids are drawn independently. Zipf: id of rank k (1-based) with probability k^-a / H(V, a),
// H(V, a) = sum_{j=1..V} j^-a. Word frequencies in natural text follow Zipf's law with a close
// to 1 (Zipf 1949; Piantadosi 2014, "Zipf's word frequency law in natural language: A critical
// review and future directions", Psychon. Bull. Rev. 21(5)), the default. Uniform: 1/V each.
// Independence is the simplification: real text repeats tokens within a sequence more than
// independent draws do, so it has somewhat fewer distinct ids than this model gives.
#ifndef STRATASIM_MODELS_TOKEN_DISTRIBUTION_H_
#define STRATASIM_MODELS_TOKEN_DISTRIBUTION_H_

#include <cstdint>
#include <vector>

#include "core/scenario.h"

namespace stratasim {

class SplitMix64;

class TokenDistribution {
 public:
  // Over `vocabulary` ids; `zipf_exponent` 0 is uniform. Throws stratasim::Error for a
  // vocabulary < 1 or a negative exponent.
  TokenDistribution(int vocabulary, double zipf_exponent);
  // The distribution `spec` asks for (its token_distribution and zipf_exponent).
  static TokenDistribution Of(const ModelSpec& spec);

  int vocabulary() const { return vocabulary_; }
  double Probability(int id) const;  // id in [0, vocabulary): rank id + 1

  // The number of distinct ids among `draws` independent draws with the generator seeded by
  // `seed` (the same seed, the same count).
  long long DistinctIds(long long draws, std::uint64_t seed) const;
  // Its expectation: sum over ids of 1 - (1 - p_id)^draws.
  double ExpectedDistinctIds(long long draws) const;
  // The same draws as DistinctIds(draws, seed), as occurrences per id (`vocabulary` entries):
  // its non-zero entries are those DistinctIds counts, and they sum to `draws`. What a
  // generated embedding gradient needs (stratasim compress-check): its non-zero rows and how
  // many tokens add into each.
  std::vector<std::uint32_t> IdCounts(long long draws, std::uint64_t seed) const;

 private:
  int vocabulary_;
  double exponent_;
  std::vector<double> cumulative_;  // Zipf only: P(id <= i); empty when uniform

  int Draw(SplitMix64& rng) const;  // one id
};

// The seed of replica `replica`'s batch of iteration `iteration`, from the training seed: each
// replica reads its own samples, each iteration new ones.
std::uint64_t BatchSeed(std::uint64_t seed, int replica, int iteration);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_TOKEN_DISTRIBUTION_H_
