#include "kernels/sparse_compressors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "kernels/row_bitmap.h"
#include "kernels/sparse_test_data.h"

namespace stratasim::kernels {
namespace {

using testing::SumOf;
using testing::ZipfEmbeddingGradients;

CompressionSpec Spec(CompressionMethod m) {
  CompressionSpec s;
  s.method = m;
  return s;
}

RowSparsity SparsityOf(const WorkerGradients& g) {
  RowSparsity rs;
  for (const std::vector<float>& w : g.workers) {
    rs.max_nonzero_rows = std::max(rs.max_nonzero_rows, NonZeroRows(w, g.shape));
  }
  rs.union_rows = NonZeroRows(SumOf(g), g.shape);
  return rs;
}

// Four workers, 256 Zipf tokens each over a 3000 x 24 embedding.
WorkerGradients Batch(std::uint64_t seed = 21) {
  return ZipfEmbeddingGradients(4, 3000, 24, 256, 1.1, seed);
}

TEST(SparseCompressorsTest, MeasuredPayloadsAreCompressedPayloads) {
  const WorkerGradients g = Batch();
  const RowSparsity rs = SparsityOf(g);
  for (CompressionMethod m : {CompressionMethod::kCoo, CompressionMethod::kOmniReduce,
                              CompressionMethod::kS2Reducer, CompressionMethod::kTopK}) {
    for (int index_bytes : {4, 8}) {
      CompressionSpec spec = Spec(m);
      spec.index_bytes = index_bytes;
      spec.sketch_rows = 3;
      const CompressionRun run = MakeSparseCompressor(spec)->Run(g, 0);
      const std::vector<WirePayload> want = CompressedPayloads(spec, g.shape, 4, 4, rs);
      ASSERT_EQ(run.payloads.size(), want.size()) << ToString(m);
      for (std::size_t p = 0; p < want.size(); ++p) {
        SCOPED_TRACE(std::string(ToString(m)) + " payload " + std::to_string(p));
        EXPECT_EQ(run.payloads[p].kind, want[p].kind);
        EXPECT_DOUBLE_EQ(run.payloads[p].bytes, want[p].bytes);
        EXPECT_DOUBLE_EQ(run.payloads[p].bytes_per_worker, want[p].bytes_per_worker);
        EXPECT_EQ(run.payloads[p].what, want[p].what);
        EXPECT_GT(run.payloads[p].bytes, 0);
      }
      EXPECT_GE(run.encode_seconds, 0);
      EXPECT_GE(run.decode_seconds, 0);
    }
  }
}

TEST(SparseCompressorsTest, RowSparseMethodsSendLessThanDenseOnAnEmbeddingBatch) {
  const WorkerGradients g = Batch();
  const double dense = 3000.0 * 24 * 4;
  for (CompressionMethod m :
       {CompressionMethod::kCoo, CompressionMethod::kOmniReduce, CompressionMethod::kS2Reducer}) {
    const CompressionRun run = MakeSparseCompressor(Spec(m))->Run(g, 0);
    double per_worker = 0;
    for (const WirePayload& p : run.payloads) per_worker += p.bytes_per_worker;
    EXPECT_LT(per_worker, dense / 2) << ToString(m);
  }
}

TEST(SparseCompressorsTest, CooAndOmniReduceDecodeExactly) {
  const WorkerGradients g = Batch();
  const std::vector<float> sum = SumOf(g);
  const long long union_rows = NonZeroRows(sum, g.shape);
  for (CompressionMethod m : {CompressionMethod::kCoo, CompressionMethod::kOmniReduce}) {
    const CompressionRun run = MakeSparseCompressor(Spec(m))->Run(g, 0);
    EXPECT_EQ(run.sum, sum) << ToString(m);
    EXPECT_EQ(run.decoded_nonzero_rows, union_rows) << ToString(m);
  }
}

TEST(SparseCompressorsTest, CooPadsToTheLargestWorkerAndSkipsThePadding) {
  // Worker 0 has rows 0 and 2, worker 1 row 1 only: its block carries one padding row.
  WorkerGradients g;
  g.shape = {3, 2};
  g.workers = {{1, 2, 0, 0, 3, 4}, {0, 0, 5, 6, 0, 0}};
  const CompressionRun run = MakeSparseCompressor(Spec(CompressionMethod::kCoo))->Run(g, 0);
  EXPECT_EQ(run.sum, (std::vector<float>{1, 2, 5, 6, 3, 4}));
  EXPECT_EQ(run.decoded_nonzero_rows, 3);
  ASSERT_EQ(run.payloads.size(), 1u);
  EXPECT_DOUBLE_EQ(run.payloads[0].bytes_per_worker, 2 * (4 + 2 * 4));
  EXPECT_DOUBLE_EQ(run.payloads[0].bytes, 2 * 2 * (4 + 2 * 4));
}

TEST(SparseCompressorsTest, S2ReducerRecoversExactlyTheUnionRows) {
  const WorkerGradients g = Batch();
  const std::vector<float> sum = SumOf(g);
  const std::vector<std::uint8_t> union_bitmap = RowBitmap(sum.data(), g.shape);
  CompressionSpec spec = Spec(CompressionMethod::kS2Reducer);
  spec.sketch_rows = 3;
  const CompressionRun run = MakeSparseCompressor(spec)->Run(g, 0);
  EXPECT_EQ(run.decoded_nonzero_rows, NonZeroRows(sum, g.shape));
  for (long long i = 0; i < g.shape.rows; ++i) {
    const bool in_union = (union_bitmap[i / 8] >> (i % 8)) & 1u;
    if (!in_union) {
      ASSERT_FALSE(RowIsNonZero(run.sum.data(), i, g.shape.cols)) << "row " << i;
    }
  }
}

TEST(SparseCompressorsTest, S2ReducerErrorShrinksAsColumnsGrow) {
  const WorkerGradients g = Batch(22);
  const std::vector<float> sum = SumOf(g);
  double previous = INFINITY;
  for (double ratio : {0.005, 0.02, 0.08, 0.32}) {
    CompressionSpec spec = Spec(CompressionMethod::kS2Reducer);
    spec.sketch_rows = 3;
    spec.sketch_ratio = ratio;
    const CompressionRun run = MakeSparseCompressor(spec)->Run(g, 0);
    double num = 0, den = 0;
    for (std::size_t i = 0; i < sum.size(); ++i) {
      num += std::pow(static_cast<double>(run.sum[i]) - sum[i], 2);
      den += std::pow(static_cast<double>(sum[i]), 2);
    }
    const double err = std::sqrt(num / den);
    EXPECT_LT(err, previous) << "sketch_ratio " << ratio;
    previous = err;
  }
}

TEST(SparseCompressorsTest, TopKKeepsExactlyKPerWorker) {
  // Two workers on disjoint halves of a 50 x 4 gradient, every magnitude distinct: the sum has
  // each worker's k largest and nothing else.
  WorkerGradients g;
  g.shape = {50, 4};
  g.workers.assign(2, std::vector<float>(200, 0.0f));
  for (int e = 0; e < 100; ++e) {
    g.workers[0][e] = (e % 2 ? -1.0f : 1.0f) * static_cast<float>((e * 37) % 100 + 1);
    g.workers[1][100 + e] = static_cast<float>((e * 53) % 100 + 1) / 8.0f;
  }
  CompressionSpec spec = Spec(CompressionMethod::kTopK);
  spec.topk_fraction = 0.05;  // k = 10 of 200
  const CompressionRun run = MakeSparseCompressor(spec)->Run(g, 0);
  int kept[2] = {0, 0};
  for (int e = 0; e < 200; ++e) {
    const int w = e / 100;
    const float v = g.workers[w][e];
    if (run.sum[e] != 0.0f) {
      ++kept[w];
      EXPECT_EQ(run.sum[e], v);
      EXPECT_GT(std::fabs(v), 90.0f / (w == 0 ? 1.0f : 8.0f)) << e;  // among the top 10 of 100
    }
  }
  EXPECT_EQ(kept[0], 10);
  EXPECT_EQ(kept[1], 10);
  EXPECT_DOUBLE_EQ(run.payloads[0].bytes_per_worker, 10 * (4 + 4));
}

TEST(SparseCompressorsTest, SameInputsAndSeedGiveTheSameSum) {
  const WorkerGradients g = Batch();
  for (CompressionMethod m : {CompressionMethod::kCoo, CompressionMethod::kOmniReduce,
                              CompressionMethod::kS2Reducer, CompressionMethod::kTopK}) {
    CompressionSpec spec = Spec(m);
    spec.seed = 3;
    EXPECT_EQ(MakeSparseCompressor(spec)->Run(g, 0).sum, MakeSparseCompressor(spec)->Run(g, 5).sum)
        << ToString(m);
  }
  // The sketch's hashes come from the seed: another seed, other collisions.
  CompressionSpec a = Spec(CompressionMethod::kS2Reducer), b = a;
  b.seed = 4;
  EXPECT_NE(MakeSparseCompressor(a)->Run(g, 0).sum, MakeSparseCompressor(b)->Run(g, 0).sum);
}

TEST(SparseCompressorsTest, RejectsOtherMethodsAndMisShapedInputs) {
  try {
    MakeSparseCompressor(Spec(CompressionMethod::kCasq));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "compressor casq: not a sparse method (coo, omnireduce, s2reducer, topk)");
  }
  WorkerGradients g;
  g.shape = {2, 2};
  g.workers = {{1, 2, 3, 4}, {1, 2}};
  try {
    MakeSparseCompressor(Spec(CompressionMethod::kS2Reducer))->Run(g, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "compressor: worker 1 has 2 values, the shape 2 x 2 needs 4");
  }
}

}  // namespace
}  // namespace stratasim::kernels
