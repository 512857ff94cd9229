#include "strategies/comm/embedding_rows.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stratasim {
namespace {

TEST(EmbeddingRows, DrawsEachReplicasBatchAndBoundsTheUnion) {
  const TokenDistribution tokens(50000, 1.0);
  const EmbeddingRows rows = CountEmbeddingRows(tokens, 4096, 4, 2, 9);
  ASSERT_TRUE(rows.drawn);
  ASSERT_EQ(rows.per_replica.size(), 2u);
  for (int it = 0; it < 2; ++it) {
    for (int q = 0; q < 4; ++q) {
      EXPECT_EQ(rows.per_replica[it][q], tokens.DistinctIds(4096, BatchSeed(9, q, it)));
    }
    const RowSparsity s = rows.Sparsity(it);
    EXPECT_GE(s.union_rows, s.max_nonzero_rows);
    EXPECT_EQ(s.union_rows,
              std::max<long long>(s.max_nonzero_rows,
                                  std::llround(tokens.ExpectedDistinctIds(4 * 4096))));
  }
  // Replicas differ (their seeds do), which is why row-sparse kinds do not fold.
  EXPECT_NE(rows.per_replica[0][0], rows.per_replica[0][1]);
}

TEST(EmbeddingRows, PastTheBoundEveryReplicaGetsTheExpectation) {
  const TokenDistribution tokens(1000, 0.0);
  // 8 replicas x 2 iterations of `at` draws reach the bound; one draw more each passes it.
  const long long at = kMaxDrawnTokens / 16;
  const EmbeddingRows past = CountEmbeddingRows(tokens, at + 1, 8, 2, 1);
  EXPECT_FALSE(past.drawn);
  for (long long n : past.per_replica[1]) {
    EXPECT_EQ(n, std::llround(tokens.ExpectedDistinctIds(at + 1)));
  }
  // The union never exceeds the vocabulary.
  EXPECT_EQ(past.union_rows[0], 1000);
}

}  // namespace
}  // namespace stratasim
