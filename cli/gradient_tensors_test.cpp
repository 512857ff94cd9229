#include "cli/gradient_tensors.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace stratasim {
namespace {

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

TEST(GradientTensors, EmbeddingRowsAreTheDistinctIdsOfEachWorkersBatch) {
  const TokenDistribution tokens(3000, 1.0);
  const kernels::WorkerGradients g = EmbeddingGradients(tokens, 16, 2048, 3, 7, 0.5);
  ASSERT_EQ(g.workers.size(), 3u);
  EXPECT_EQ(g.shape.rows, 3000);
  EXPECT_EQ(g.shape.cols, 16);
  for (int w = 0; w < 3; ++w) {
    // The draws compressed DDP plans for replica w's first iteration.
    EXPECT_EQ(kernels::NonZeroRows(g.workers[w], g.shape),
              tokens.DistinctIds(2048, BatchSeed(7, w, 0)))
        << w;
  }
  EXPECT_NE(g.workers[0], g.workers[1]);
  // The same seed, the same tensors; another seed, others.
  EXPECT_EQ(EmbeddingGradients(tokens, 16, 2048, 3, 7, 0.5).workers, g.workers);
  EXPECT_NE(EmbeddingGradients(tokens, 16, 2048, 3, 8, 0.5).workers[0], g.workers[0]);
}

TEST(GradientTensors, EmbeddingRowsGrowAsTheSquareRootOfTheirCounts) {
  // A row drawn c times holds c independent N(0, scale^2) contributions: mean square scale^2 c.
  const TokenDistribution tokens(1000, 1.0);
  const long long cols = 4096;
  const double scale = 0.01;
  const kernels::WorkerGradients g = EmbeddingGradients(tokens, cols, 5000, 1, 3, scale);
  const std::vector<std::uint32_t> counts = tokens.IdCounts(5000, BatchSeed(3, 0, 0));
  for (int id : {0, 1, 9}) {
    ASSERT_GT(counts[id], 10u) << id;  // Zipf: the top ids are drawn hundreds of times
    std::vector<double> sq;
    for (long long c = 0; c < cols; ++c) {
      const double v = g.workers[0][id * cols + c];
      sq.push_back(v * v);
    }
    EXPECT_NEAR(Mean(sq) / (scale * scale * counts[id]), 1.0, 0.08) << id;
  }
}

double Kurtosis(const std::vector<float>& v) {
  double m2 = 0, m4 = 0;
  for (float x : v) {
    m2 += static_cast<double>(x) * x;
    m4 += std::pow(static_cast<double>(x), 4);
  }
  m2 /= static_cast<double>(v.size());
  m4 /= static_cast<double>(v.size());
  return m4 / (m2 * m2);
}

TEST(GradientTensors, DenseValuesFollowTheirDistributionAndDensity) {
  const long long n = 200000;
  const kernels::WorkerGradients normal =
      DenseGradients(n, ValueDistribution::kNormal, 1.0, 2, 1, 2.0);
  EXPECT_EQ(normal.shape.rows, n);
  EXPECT_EQ(normal.shape.cols, 1);
  double sq = 0;
  for (float v : normal.workers[0]) sq += static_cast<double>(v) * v;
  EXPECT_NEAR(sq / n, 4.0, 0.05);  // variance scale^2
  EXPECT_NEAR(Kurtosis(normal.workers[0]), 3.0, 0.1);
  const kernels::WorkerGradients laplace =
      DenseGradients(n, ValueDistribution::kLaplace, 1.0, 1, 1, 1.0);
  sq = 0;
  for (float v : laplace.workers[0]) sq += static_cast<double>(v) * v;
  EXPECT_NEAR(sq / n, 1.0, 0.03);
  EXPECT_NEAR(Kurtosis(laplace.workers[0]), 6.0, 0.5);  // Laplace's heavier tails
  const kernels::WorkerGradients sparse =
      DenseGradients(n, ValueDistribution::kNormal, 0.25, 2, 1, 1.0);
  for (int w = 0; w < 2; ++w) {
    EXPECT_NEAR(static_cast<double>(kernels::NonZeroRows(sparse.workers[w], sparse.shape)) / n,
                0.25, 0.005);
  }
  EXPECT_NE(sparse.workers[0], sparse.workers[1]);  // each worker its own positions
}

TEST(GradientTensors, OneArrayIsSharedWithNoiseOnItsNonZerosOnly) {
  NpyArray a;
  a.rows = 4;
  a.cols = 1000;
  a.values.assign(4000, 0.0f);
  for (int i = 0; i < 1000; ++i) a.values[1000 + i] = (i % 2 ? 1.0f : -1.0f);  // rms 1, row 1
  const kernels::WorkerGradients g = ArrayGradients({a}, 3, 0.1, 5);
  ASSERT_EQ(g.workers.size(), 3u);
  for (int w = 0; w < 3; ++w) {
    EXPECT_EQ(kernels::NonZeroRows(g.workers[w], g.shape), 1);  // rows 0, 2, 3 stay zero
    double sq = 0;
    for (int i = 0; i < 1000; ++i) {
      const double d = g.workers[w][1000 + i] - a.values[1000 + i];
      sq += d * d;
    }
    EXPECT_NEAR(std::sqrt(sq / 1000), 0.1, 0.01) << w;
  }
  EXPECT_NE(g.workers[0], g.workers[1]);
  EXPECT_EQ(ArrayGradients({a}, 2, 0, 5).workers[1], a.values);  // no noise: the array itself
}

TEST(GradientTensors, SeveralArraysAreOnePerWorker) {
  NpyArray a, b;
  a.rows = b.rows = 2;
  a.values = {1, 2};
  b.values = {3, 4};
  const kernels::WorkerGradients g = ArrayGradients({a, b}, 2, 0.1, 0);
  EXPECT_EQ(g.workers[0], a.values);
  EXPECT_EQ(g.workers[1], b.values);
  try {
    ArrayGradients({a, b}, 3, 0.1, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "2 arrays for 3 workers: give one array per worker, or one for all of them");
  }
  b.rows = 1;
  b.cols = 2;
  try {
    ArrayGradients({a, b}, 2, 0.1, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "array 2 is 1 x 2, array 1 is 2 x 1: every worker's array must have the same "
                 "shape");
  }
}

}  // namespace
}  // namespace stratasim
