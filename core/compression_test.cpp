#include "core/compression.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stratasim {
namespace {

CompressionSpec Spec(CompressionMethod m) {
  CompressionSpec s;
  s.method = m;
  return s;
}

TEST(CompressionTest, NamesRoundTrip) {
  for (CompressionMethod m : kAllCompressionMethods) {
    EXPECT_EQ(ParseCompressionMethod(ToString(m)), m) << ToString(m);
  }
  EXPECT_FALSE(ParseCompressionMethod("zip").has_value());
  EXPECT_TRUE(IsRowSparse(CompressionMethod::kS2Reducer));
  EXPECT_FALSE(IsRowSparse(CompressionMethod::kCasq));
}

TEST(CompressionTest, S2ReducerSendsSketchAndBitmapWhateverTheWorkers) {
  CompressionSpec s = Spec(CompressionMethod::kS2Reducer);
  s.sketch_rows = 3;
  s.sketch_columns = 1000;
  const GradientShape shape{50257, 1024};
  for (int workers : {2, 8, 64}) {
    const auto p = CompressedPayloads(s, shape, 2, workers, {});
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].kind, CollectiveKind::kAllReduce);
    // 4rc + n/8, n the table's rows (ceil).
    EXPECT_DOUBLE_EQ(p[0].bytes, 4.0 * 3 * 1000 + 6283);
    EXPECT_DOUBLE_EQ(p[0].bytes_per_worker, p[0].bytes);
  }
  s.sketch_columns = 0;  // sized by sketch_ratio
  EXPECT_EQ(SketchColumns(s, shape), static_cast<long long>(std::ceil(0.005 * 50257 * 1024)));
}

TEST(CompressionTest, CasqAllGatherGrowsLinearlyWithWorkers) {
  CompressionSpec s = Spec(CompressionMethod::kCasq);
  s.casq_bits = 2;
  s.table_ratio = 0.01;
  const GradientShape shape{1'000'000, 1};
  const double per_worker = 4 * 62500 + 4 * 10000 + 4 * 4;  // codes + buckets + centres
  for (int workers : {2, 4, 16}) {
    const auto p = CompressedPayloads(s, shape, 4, workers, {});
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].kind, CollectiveKind::kAllGather);
    EXPECT_DOUBLE_EQ(p[0].bytes_per_worker, per_worker);
    EXPECT_DOUBLE_EQ(p[0].bytes, per_worker * workers);
  }
}

TEST(CompressionTest, RowSparseBaselinesFollowTheRows) {
  const GradientShape shape{1000, 16};
  const RowSparsity rows{30, 70};
  const auto coo = CompressedPayloads(Spec(CompressionMethod::kCoo), shape, 2, 4, rows);
  EXPECT_DOUBLE_EQ(coo[0].bytes_per_worker, 30 * (4 + 16 * 2));
  EXPECT_DOUBLE_EQ(coo[0].bytes, 4 * 30 * (4 + 16 * 2));
  const auto omni = CompressedPayloads(Spec(CompressionMethod::kOmniReduce), shape, 2, 4, rows);
  ASSERT_EQ(omni.size(), 2u);
  EXPECT_DOUBLE_EQ(omni[0].bytes, 125);
  EXPECT_DOUBLE_EQ(omni[1].bytes, 70 * 16 * 2);
  EXPECT_DOUBLE_EQ(CompressedPayloads(Spec(CompressionMethod::kDense), shape, 2, 4, rows)[0].bytes,
                   32000);
}

TEST(CompressionTest, QuantizersPackTheirBits) {
  const GradientShape shape{1024, 1};
  EXPECT_DOUBLE_EQ(CompressedPayloads(Spec(CompressionMethod::kQsgd), shape, 4, 1, {})[0].bytes,
                   1024 * 5 / 8 + 4 * 2);  // s = 15: sign + 4 bits
  EXPECT_DOUBLE_EQ(CompressedPayloads(Spec(CompressionMethod::kTernGrad), shape, 4, 1, {})[0].bytes,
                   256 + 8);
  EXPECT_DOUBLE_EQ(CompressedPayloads(Spec(CompressionMethod::kInt8), shape, 4, 2, {})[0].bytes,
                   2 * (1024 + 16));
  EXPECT_DOUBLE_EQ(CompressedPayloads(Spec(CompressionMethod::kFp8), shape, 4, 2, {})[0].bytes,
                   1024);
  CompressionSpec topk = Spec(CompressionMethod::kTopK);
  topk.topk_fraction = 0.1;
  EXPECT_EQ(TopKElements(topk, 1024), 103);
  EXPECT_DOUBLE_EQ(CompressedPayloads(topk, shape, 4, 3, {})[0].bytes, 3 * 103 * 8);
}

TEST(CompressionTest, ChecksNameTheFieldAndRule) {
  CompressionSpec s;
  EXPECT_EQ(CheckCompressionSpec(s), "");
  s.casq_bits = 9;
  EXPECT_EQ(CheckCompressionSpec(s), "casq_bits must be in [1, 8]");
  s.casq_bits = 0;
  EXPECT_EQ(CheckCompressionSpec(s), "casq_bits must be in [1, 8]");
  s = {};
  s.sketch_columns = -1;
  EXPECT_EQ(CheckCompressionSpec(s),
            "sketch_columns must be at least 1 (0: sized by sketch_ratio)");
  s = {};
  s.topk_fraction = 0;
  EXPECT_EQ(CheckCompressionSpec(s), "topk_fraction must be in (0, 1]");
}

}  // namespace
}  // namespace stratasim
