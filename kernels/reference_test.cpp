// The references against values worked out by hand, so that a GPU test comparing a kernel with
// them compares with something known to be right. Runs on every machine.
#include "kernels/reference.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace stratasim::kernels::reference {
namespace {

TEST(Reference, GemmMultipliesRowMajorBatches) {
  // Batch 0: [1 2; 3 4] x [5 6; 7 8] = [19 22; 43 50]; batch 1: identity x B = B.
  const std::vector<float> a = {1, 2, 3, 4, 1, 0, 0, 1};
  const std::vector<float> b = {5, 6, 7, 8, 9, 10, 11, 12};
  EXPECT_EQ(Gemm(a, b, 2, 2, 2, 2, false), (std::vector<float>{19, 22, 43, 50, 9, 10, 11, 12}));
  // B stored [n][k]: [1 2; 3 4] x [5 6; 7 8]^T = [17 23; 39 53]; identity x B^T = B^T.
  EXPECT_EQ(Gemm(a, b, 2, 2, 2, 2, true), (std::vector<float>{17, 23, 39, 53, 9, 11, 10, 12}));
  // Non-square: [1 2 3] (1x3) x [1; 2; 3] (3x1) = [14]; [2x1] x [1x3] = outer product.
  EXPECT_EQ(Gemm({1, 2, 3}, {1, 2, 3}, 1, 1, 3, 1, false), std::vector<float>{14});
  EXPECT_EQ(Gemm({1, 2}, {3, 4, 5}, 2, 3, 1, 1, false), (std::vector<float>{3, 4, 5, 6, 8, 10}));
}

TEST(Reference, GemmRejectsMismatchedSizes) {
  try {
    Gemm({1, 2, 3}, {1, 2}, 1, 1, 3, 1, true);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch * k * n = 3 expected"), std::string::npos)
        << e.what();
  }
}

TEST(Reference, ScaleAddAndGelu) {
  std::vector<float> y = {1, 2};
  ScaleAdd(2, {3, -1}, y);
  EXPECT_EQ(y, (std::vector<float>{7, 0}));
  const std::vector<float> g = Gelu({0, 1, -1, 10});
  EXPECT_FLOAT_EQ(g[0], 0);
  EXPECT_NEAR(g[1], 0.841192, 1e-5);  // GELU_tanh(1) from the formula, by hand
  EXPECT_NEAR(g[2], -0.158808, 1e-5);
  EXPECT_NEAR(g[3], 10, 1e-5);
}

TEST(Reference, SoftmaxRowsSumToOneAndIgnoreShift) {
  const std::vector<float> y = Softmax({0, std::log(3.0f), 100, 100}, 2, 1);
  EXPECT_NEAR(y[0], 0.25, 1e-6);
  EXPECT_NEAR(y[1], 0.75, 1e-6);
  EXPECT_NEAR(y[2], 0.5, 1e-6);  // large equal logits: no overflow
  EXPECT_NEAR(y[3], 0.5, 1e-6);
  EXPECT_THROW(Softmax({1, 2, 3}, 2, 1), Error);
}

TEST(Reference, LayerNormNormalisesEachRow) {
  // Row [1 3]: mean 2, variance 1 -> [-1 1] (eps 0), then gamma 2, beta 1 -> [-1 3].
  const std::vector<float> y = LayerNorm({1, 3, 5, 5}, {2, 2}, {1, 1}, 0);
  EXPECT_FLOAT_EQ(y[0], -1);
  EXPECT_FLOAT_EQ(y[1], 3);
  EXPECT_TRUE(std::isnan(y[2]));  // constant row with eps 0: 0/0, as PyTorch gives
  EXPECT_THROW(LayerNorm({1, 2, 3}, {1, 1}, {0, 0}, 1e-5f), Error);
}

TEST(Reference, AdamFirstStepMovesByLearningRate) {
  // At step 1 the bias-corrected m/sqrt(v) is g/|g| (eps aside): every parameter moves by lr
  // against its gradient's sign (Kingma & Ba 2015, section 2.1).
  AdamConfig c;
  c.lr = 0.1f;
  std::vector<float> p = {1, 1}, m = {0, 0}, v = {0, 0};
  AdamStep(c, p, {0.5f, -2.0f}, m, v);
  EXPECT_NEAR(p[0], 0.9, 1e-6);
  EXPECT_NEAR(p[1], 1.1, 1e-6);
  EXPECT_NEAR(m[0], 0.05, 1e-7);
  EXPECT_NEAR(v[1], 0.004, 1e-7);
  c.weight_decay = 0.5f;  // decoupled: p -= lr * wd * p first
  c.step = 2;
  std::vector<float> p2 = {2}, m2 = {0}, v2 = {0};
  AdamStep(c, p2, {0}, m2, v2);
  EXPECT_NEAR(p2[0], 1.9, 1e-6);
}

TEST(Reference, Int8QuantizationRoundTripsWithinHalfAStep) {
  const std::vector<float> x = {0.5f, -1.27f, 0.0f, 1.0f, 0, 0, 0, 0};
  std::vector<std::int8_t> q;
  std::vector<float> s;
  QuantizeInt8(x, 4, q, s);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_FLOAT_EQ(s[0], 0.01f);  // absmax 1.27 / 127
  EXPECT_FLOAT_EQ(s[1], 1.0f);   // all-zero block
  EXPECT_EQ(q[1], -127);
  EXPECT_EQ(q[3], 100);
  const std::vector<float> y = DequantizeInt8(q, s, 4);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i], s[i / 4] / 2 + 1e-7);
  EXPECT_THROW(DequantizeInt8(q, {1.0f}, 4), Error);
}

}  // namespace
}  // namespace stratasim::kernels::reference
