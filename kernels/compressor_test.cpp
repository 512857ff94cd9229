#include "kernels/compressor.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim::kernels {
namespace {

TEST(CompressorTest, DenseSumsExactlyAndSendsTheWholeGradient) {
  WorkerGradients g;
  g.shape = {3, 2};
  g.workers = {{1, 0, 0, 0, 2, 3}, {0, 0, 0, 0, -2, 1}};
  CompressionSpec spec;
  const CompressionRun run = MakeCompressor(spec)->Run(g, 0);
  EXPECT_EQ(run.sum, (std::vector<float>{1, 0, 0, 0, 0, 4}));
  ASSERT_EQ(run.payloads.size(), 1u);
  EXPECT_DOUBLE_EQ(run.payloads[0].bytes, 6 * 4);
  EXPECT_EQ(run.decoded_nonzero_rows, 2);
}

TEST(CompressorTest, RejectsMisShapedInputsAndBadSpecs) {
  WorkerGradients g;
  g.shape = {3, 2};
  g.workers = {{1, 2, 3}};
  try {
    MakeCompressor(CompressionSpec{})->Run(g, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "compressor: worker 0 has 3 values, the shape 3 x 2 needs 6");
  }
  CompressionSpec bad;
  bad.method = CompressionMethod::kCasq;
  bad.casq_bits = 0;
  try {
    MakeCompressor(bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "compressor casq: casq_bits must be in [1, 8]");
  }
}

}  // namespace
}  // namespace stratasim::kernels
