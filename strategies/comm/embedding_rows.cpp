#include "strategies/comm/embedding_rows.h"

#include <algorithm>
#include <cmath>

namespace stratasim {

RowSparsity EmbeddingRows::Sparsity(int iteration) const {
  const std::vector<long long>& rows = per_replica[iteration];
  return {*std::max_element(rows.begin(), rows.end()), union_rows[iteration]};
}

EmbeddingRows CountEmbeddingRows(const TokenDistribution& tokens, long long draws_per_replica,
                                 int replicas, int iterations, std::uint64_t seed) {
  EmbeddingRows out;
  const double total = static_cast<double>(draws_per_replica) * replicas * iterations;
  out.drawn = total <= static_cast<double>(kMaxDrawnTokens);
  const long long expected_one = std::llround(tokens.ExpectedDistinctIds(draws_per_replica));
  const long long expected_union =
      std::llround(tokens.ExpectedDistinctIds(draws_per_replica * replicas));
  for (int it = 0; it < iterations; ++it) {
    std::vector<long long> rows(replicas, expected_one);
    if (out.drawn) {
      for (int q = 0; q < replicas; ++q) {
        rows[q] = tokens.DistinctIds(draws_per_replica, BatchSeed(seed, q, it));
      }
    }
    const long long most = *std::max_element(rows.begin(), rows.end());
    out.union_rows.push_back(
        std::min<long long>(tokens.vocabulary(), std::max(most, expected_union)));
    out.per_replica.push_back(std::move(rows));
  }
  return out;
}

}  // namespace stratasim
