#include "cli/compression_metrics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace stratasim {
namespace {

// Two workers of a 3 x 2 gradient whose sum is rows {1, 2}, 0, {0, 3}.
kernels::WorkerGradients TwoWorkers() {
  kernels::WorkerGradients g;
  g.shape = {3, 2};
  g.workers = {{1, 0, 0, 0, 0, 1}, {0, 2, 0, 0, 0, 2}};
  return g;
}

TEST(CompressionMetrics, ExactSumAndItsRows) {
  const ExactSum e = ExactSumOf(TwoWorkers());
  EXPECT_EQ(e.sum, (std::vector<double>{1, 2, 0, 0, 0, 3}));
  EXPECT_DOUBLE_EQ(e.norm, std::sqrt(14.0));
  EXPECT_EQ(e.nonzero_row, (std::vector<char>{1, 0, 1}));
  EXPECT_EQ(e.nonzero_rows, 2);
  kernels::WorkerGradients cancel = TwoWorkers();
  cancel.workers = {{1, 0, 0, 0, 0, 1}, {-1, 0, 0, 0, 0, -1}};
  try {
    ExactSumOf(cancel);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "the workers' gradients sum to zero: no relative error is defined");
  }
}

TEST(CompressionMetrics, RelativeErrorAndRows) {
  const ExactSum e = ExactSumOf(TwoWorkers());
  const TrialMetrics exact = MeasureTrial(e, {1, 2, 0, 0, 0, 3});
  EXPECT_EQ(exact.relative_error, 0);
  EXPECT_EQ(exact.decoded_rows, 2);
  EXPECT_EQ(exact.recovered_rows, 2);
  EXPECT_EQ(exact.false_rows, 0);
  // Row 2 lost, row 1 made up: error ||(0,0, 0,1, 0,-3)|| / ||s|| = sqrt(10 / 14).
  const TrialMetrics bad = MeasureTrial(e, {1, 2, 0, 1, 0, 0});
  EXPECT_DOUBLE_EQ(bad.relative_error, std::sqrt(10.0 / 14.0));
  EXPECT_EQ(bad.decoded_rows, 2);
  EXPECT_EQ(bad.recovered_rows, 1);
  EXPECT_EQ(bad.false_rows, 1);
  try {
    MeasureTrial(e, {1, 2});
    FAIL();
  } catch (const Error& err) {
    EXPECT_STREQ(err.what(), "the decoded sum has 2 values, the gradient 6");
  }
}

TEST(CompressionMetrics, BiasIsTheErrorOfTheMean) {
  const ExactSum e = ExactSumOf(TwoWorkers());
  BiasMeter unbiased(e);
  EXPECT_EQ(unbiased.Bias(), 0);
  // s + d and s - d: each is off by ||d|| / ||s||, their mean not at all.
  unbiased.Add({2, 2, 0, 0, 0, 3});
  unbiased.Add({0, 2, 0, 0, 0, 3});
  EXPECT_DOUBLE_EQ(unbiased.Bias(), 0);
  BiasMeter biased(e);
  biased.Add({2, 2, 0, 0, 0, 3});
  biased.Add({2, 2, 0, 0, 0, 3});
  EXPECT_DOUBLE_EQ(biased.Bias(), 1 / std::sqrt(14.0));
}

TEST(CompressionMetrics, Median) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
}

}  // namespace
}  // namespace stratasim
