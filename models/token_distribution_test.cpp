#include "models/token_distribution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "models/gpt.h"

namespace stratasim {
namespace {

TEST(TokenDistribution, ZipfProbabilitiesFollowRankToTheMinusExponent) {
  const TokenDistribution zipf(1000, 1.0);
  double h = 0;
  for (int k = 1; k <= 1000; ++k) h += 1.0 / k;
  EXPECT_NEAR(zipf.Probability(0), 1 / h, 1e-12);
  EXPECT_NEAR(zipf.Probability(9), 1 / (10 * h), 1e-12);
  double sum = 0;
  for (int i = 0; i < 1000; ++i) sum += zipf.Probability(i);
  EXPECT_NEAR(sum, 1, 1e-12);
}

TEST(TokenDistribution, DistinctIdsMatchTheirExpectation) {
  // Over 20 seeds the mean count is within 1% of sum_i 1 - (1 - p_i)^n.
  for (double a : {0.0, 0.8, 1.0, 1.2}) {
    const TokenDistribution d(50257, a);
    const long long draws = 8 * 1024;
    double mean = 0;
    for (int seed = 0; seed < 20; ++seed) mean += d.DistinctIds(draws, BatchSeed(7, 0, seed));
    mean /= 20;
    EXPECT_NEAR(mean / d.ExpectedDistinctIds(draws), 1, 0.01) << "exponent " << a;
    EXPECT_LT(mean, draws);
  }
  // Skew lowers the count: uniform draws of 8k from 50k repeat little, Zipf ones a lot.
  EXPECT_GT(TokenDistribution(50257, 0).ExpectedDistinctIds(8192),
            2 * TokenDistribution(50257, 1.0).ExpectedDistinctIds(8192));
}

TEST(TokenDistribution, SameSeedSameCountOtherSeedsDiffer) {
  const TokenDistribution d(30000, 1.0);
  EXPECT_EQ(d.DistinctIds(4096, 11), d.DistinctIds(4096, 11));
  EXPECT_NE(BatchSeed(1, 0, 0), BatchSeed(1, 1, 0));
  EXPECT_NE(BatchSeed(1, 0, 0), BatchSeed(1, 0, 1));
  int differ = 0;
  for (int i = 1; i < 10; ++i) differ += d.DistinctIds(4096, 0) != d.DistinctIds(4096, i);
  EXPECT_GT(differ, 5);
}

TEST(TokenDistribution, IdCountsAreTheDrawsDistinctIdsCounts) {
  for (double a : {0.0, 1.0}) {
    const TokenDistribution d(5000, a);
    const std::vector<std::uint32_t> counts = d.IdCounts(3000, 5);
    ASSERT_EQ(counts.size(), 5000u);
    long long total = 0, distinct = 0;
    for (std::uint32_t c : counts) {
      total += c;
      distinct += c > 0;
    }
    EXPECT_EQ(total, 3000);
    EXPECT_EQ(distinct, d.DistinctIds(3000, 5)) << "exponent " << a;
    EXPECT_EQ(counts, d.IdCounts(3000, 5));
  }
  // Zipf: id 0 (rank 1) is the most drawn.
  const std::vector<std::uint32_t> zipf = TokenDistribution(5000, 1.0).IdCounts(3000, 5);
  EXPECT_EQ(std::max_element(zipf.begin(), zipf.end()) - zipf.begin(), 0);
  try {
    TokenDistribution(10, 0).IdCounts(-1, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "token distribution: -1 draws must be in [0, 2^32) to be counted per id");
  }
}

TEST(TokenDistribution, RejectsAnEmptyVocabularyAndNegativeExponents) {
  EXPECT_THROW(TokenDistribution(0, 1.0), Error);
  EXPECT_THROW(TokenDistribution(10, -1.0), Error);
}

TEST(SparseEmbeddingGpt, UntiesTheHeadAndNamesTheTable) {
  ModelSpec spec;
  spec.layers = 2;
  spec.hidden = 64;
  spec.heads = 4;
  spec.sequence = 32;
  spec.vocabulary = 1000;
  const Workload tied = BuildGpt(spec, 1, DType::kBF16);
  EXPECT_FALSE(tied.sparse_embedding.has_value());
  spec.sparse_embedding = true;
  const Workload sparse = BuildGpt(spec, 1, DType::kBF16);
  ASSERT_TRUE(sparse.sparse_embedding.has_value());
  EXPECT_EQ(sparse.layers[sparse.sparse_embedding->layer].name, "embedding");
  EXPECT_EQ(sparse.sparse_embedding->rows, 1000);
  EXPECT_EQ(sparse.sparse_embedding->row_params, 64);
  // The head's own V x h projection; the same FLOPs.
  EXPECT_DOUBLE_EQ(sparse.params - tied.params, 1000.0 * 64);
  EXPECT_DOUBLE_EQ(sparse.params, GptParameterCount(spec));
  EXPECT_DOUBLE_EQ(sparse.ForwardFlops(), tied.ForwardFlops());
}

}  // namespace
}  // namespace stratasim
