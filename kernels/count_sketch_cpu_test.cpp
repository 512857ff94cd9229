#include "kernels/count_sketch_cpu.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "kernels/row_bitmap.h"
#include "kernels/sketch_hash.h"
#include "kernels/sparse_test_data.h"

namespace stratasim::kernels {
namespace {

using testing::SumOf;
using testing::ZipfEmbeddingGradients;

// sqrt(sum (est - x)^2 / sum x^2) over the whole gradient.
double RelativeError(const std::vector<float>& est, const std::vector<float>& x) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    num += (static_cast<double>(est[i]) - x[i]) * (static_cast<double>(est[i]) - x[i]);
    den += static_cast<double>(x[i]) * x[i];
  }
  return std::sqrt(num / den);
}

TEST(CountSketchCpuTest, SketchOfTheSumIsTheSumOfTheSketches) {
  // Four workers' batches of 256 Zipf ids over a 4000-row, 16-column embedding.
  const WorkerGradients g = ZipfEmbeddingGradients(4, 4000, 16, 256, 1.1, 11);
  const CountSketchParams params{3, 1500, 7};
  CountSketch merged = EncodeCountSketch(g.workers[0].data(), g.shape, params);
  for (std::size_t w = 1; w < g.workers.size(); ++w) {
    MergeCountSketch(merged, EncodeCountSketch(g.workers[w].data(), g.shape, params));
  }
  const std::vector<float> sum = SumOf(g);
  const CountSketch of_sum = EncodeCountSketch(sum.data(), g.shape, params);
  // The values are exact in any order of addition (sparse_test_data.h): equal bit for bit.
  EXPECT_EQ(merged.table, of_sum.table);
  // No row of this batch cancels out across workers, so OR of bitmaps = bitmap of the sum.
  EXPECT_EQ(merged.bitmap, of_sum.bitmap);
  EXPECT_EQ(DecodeCountSketch(merged, g.shape, params), DecodeCountSketch(of_sum, g.shape, params));
  // The batch is sparse: the union is a small part of the vocabulary, yet shared rows exist.
  const long long union_rows = static_cast<long long>(BitmapRows(merged.bitmap, 4000).size());
  EXPECT_LT(union_rows, 4000 / 4);
  EXPECT_LT(union_rows, 4 * NonZeroRows(g.workers[0], g.shape));
}

TEST(CountSketchCpuTest, DecodesOnlyTheUnionRowsAndErrorShrinksWithColumns) {
  // About 5,600 non-zero elements in 355 union rows.
  const WorkerGradients g = ZipfEmbeddingGradients(4, 4000, 16, 256, 1.1, 12);
  const std::vector<float> sum = SumOf(g);
  const std::vector<std::uint8_t> union_bitmap = RowBitmap(sum.data(), g.shape);
  long long nonzero = 0;
  for (float v : sum) nonzero += v != 0.0f;
  double previous_error = INFINITY;
  long long previous_exact = -1, exact = 0;
  for (long long c : {500LL, 2000LL, 8000LL, 32000LL}) {
    const CountSketchParams params{3, c, 5};
    CountSketch merged = EncodeCountSketch(g.workers[0].data(), g.shape, params);
    for (std::size_t w = 1; w < g.workers.size(); ++w) {
      MergeCountSketch(merged, EncodeCountSketch(g.workers[w].data(), g.shape, params));
    }
    const std::vector<float> est = DecodeCountSketch(merged, g.shape, params);
    for (long long i = 0; i < g.shape.rows; ++i) {
      if ((union_bitmap[i / 8] >> (i % 8)) & 1u) continue;
      ASSERT_FALSE(RowIsNonZero(est.data(), i, g.shape.cols)) << "row " << i << ", c = " << c;
    }
    exact = 0;
    for (std::size_t e = 0; e < sum.size(); ++e) exact += sum[e] != 0.0f && est[e] == sum[e];
    const double err = RelativeError(est, sum);
    EXPECT_LT(err, previous_error) << "c = " << c;
    EXPECT_GT(exact, previous_exact) << "c = " << c;
    previous_error = err;
    previous_exact = exact;
  }
  // About 5.7 columns per non-zero element: for nine in ten elements, at least two of the three
  // rows put no other element in their bucket, and the median is the value itself. (The
  // relative L2 error stays near 0.1: the few collisions with the popular ids' large rows
  // dominate it.)
  EXPECT_GT(exact, nonzero * 9 / 10);
  EXPECT_LT(previous_error, 0.15);
}

TEST(CountSketchCpuTest, AnElementAloneInItsBucketsDecodesExactly) {
  const GradientShape shape{10, 3};
  std::vector<float> x(30, 0.0f);
  x[7 * 3 + 2] = -1.25f;
  const CountSketchParams params{4, 16, 3};
  const std::vector<float> est =
      DecodeCountSketch(EncodeCountSketch(x.data(), shape, params), shape, params);
  EXPECT_EQ(est[7 * 3 + 2], -1.25f);
  // The row's other elements read the buckets of the lone element or zeros: the median of
  // four estimates, each 0 or +-1.25, so never further than 1.25 from 0.
  EXPECT_LE(std::fabs(est[7 * 3 + 0]), 1.25f);
  for (int i = 0; i < 21; ++i) EXPECT_EQ(est[i], 0.0f) << i;  // rows 0..6 are not in the bitmap
}

TEST(CountSketchCpuTest, MedianOfOddAndEvenCounts) {
  float odd[] = {3, -1, 2};
  EXPECT_EQ(sketch::MedianInPlace(odd, 3), 2.0f);
  float even[] = {4, 1, -2, 8};
  EXPECT_EQ(sketch::MedianInPlace(even, 4), 2.5f);
  float one[] = {-7};
  EXPECT_EQ(sketch::MedianInPlace(one, 1), -7.0f);
}

TEST(CountSketchCpuTest, HashesDependOnTheSeedAndTheRow) {
  // Same seed, same row: the same bucket on every worker; another row or seed: another hash.
  const std::uint64_t h = sketch::ElementHash(sketch::RowKey(1, 0), 12345);
  EXPECT_EQ(h, sketch::ElementHash(sketch::RowKey(1, 0), 12345));
  EXPECT_NE(h, sketch::ElementHash(sketch::RowKey(1, 1), 12345));
  EXPECT_NE(h, sketch::ElementHash(sketch::RowKey(2, 0), 12345));
  // Buckets cover [0, c) about evenly: 64,000 elements into 64 buckets, each within 15% of 1000.
  std::vector<int> counts(64, 0);
  const std::uint64_t key = sketch::RowKey(9, 0);
  int negative = 0;
  for (std::uint64_t e = 0; e < 64000; ++e) {
    const std::uint64_t x = sketch::ElementHash(key, e);
    ++counts[sketch::Bucket(x, 64)];
    negative += sketch::Sign(x) < 0;
  }
  for (int b = 0; b < 64; ++b) EXPECT_NEAR(counts[b], 1000, 150) << "bucket " << b;
  EXPECT_NEAR(negative, 32000, 1000);
}

TEST(CountSketchCpuTest, RejectsBadParametersAndMismatchedSketches) {
  const GradientShape shape{4, 2};
  const std::vector<float> x(8, 1.0f);
  try {
    EncodeCountSketch(x.data(), shape, {0, 8, 0});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "count sketch: 0 x 8: need 1 <= rows <= 64 and columns >= 1");
  }
  CountSketch a = EncodeCountSketch(x.data(), shape, {1, 8, 0});
  try {
    MergeCountSketch(a, EncodeCountSketch(x.data(), shape, {1, 9, 0}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "count sketch: merging sketches of different sizes");
  }
  try {
    DecodeCountSketch(a, shape, {2, 8, 0});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "count sketch: the sketch does not match its parameters or the gradient shape");
  }
}

}  // namespace
}  // namespace stratasim::kernels
