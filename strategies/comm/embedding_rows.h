// The non-zero rows of a sparse token table's gradient (Workload::sparse_embedding) in each
// replica's batch, and their union over the replicas: what sizes the row-sparse payloads
// (RowSparsity, core/compression.h) and the encode/decode work of one compressed step.
//
// Per replica: the distinct ids among its draws = micro-batches x micro_batch x sequence
// tokens, drawn with BatchSeed(seed, replica, iteration) (models/token_distribution.h), as
// TriRace's sparse exchange draws them, so the same scenario gives the same rows.
//
// The union: its expectation over independent draws, ExpectedDistinctIds(replicas x draws)
// (each id is in the union unless no replica drew it: sum over ids of 1 - (1 - p)^(W d)),
// rounded and kept within [the largest replica's count, the vocabulary]. token_distribution.h
// returns counts, not the ids, so the exact union of the drawn batches is not available; the
// expectation costs O(vocabulary) whatever the batch.
//
// Bound: drawing costs one draw per token. Past kMaxDrawnTokens draws over all replicas and
// iterations, every replica's count is its expectation ExpectedDistinctIds(draws) instead (equal
// on all replicas, so folding stays exact), and `drawn` is false.
#ifndef STRATASIM_STRATEGIES_COMM_EMBEDDING_ROWS_H_
#define STRATASIM_STRATEGIES_COMM_EMBEDDING_ROWS_H_

#include <cstdint>
#include <vector>

#include "core/compression.h"
#include "models/token_distribution.h"

namespace stratasim {

// 2^26 draws (about 67 M tokens, a few seconds of planning).
inline constexpr long long kMaxDrawnTokens = 1LL << 26;

struct EmbeddingRows {
  std::vector<std::vector<long long>> per_replica;  // [iteration][replica]
  std::vector<long long> union_rows;                // [iteration]
  bool drawn = true;  // false: the per-replica counts are expectations (past the bound)

  RowSparsity Sparsity(int iteration) const;
};

EmbeddingRows CountEmbeddingRows(const TokenDistribution& tokens, long long draws_per_replica,
                                 int replicas, int iterations, std::uint64_t seed);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_COMM_EMBEDDING_ROWS_H_
