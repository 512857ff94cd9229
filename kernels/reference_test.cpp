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

TEST(Reference, AttentionByHand) {
  // d = 1 (scale 1), one query q = 2 over keys 0 and ln(3)/2: S = [0, ln 3], P = [1/4, 3/4],
  // O = 4/4 + 3 * 8/4 = 7, lse = log(1 + 3).
  AttentionDims dims{1, 1, 2, 1, false};
  std::vector<float> o, lse;
  AttentionForward(dims, {2}, {0, std::log(3.0f) / 2}, {4, 8}, o, lse);
  EXPECT_NEAR(o[0], 7, 1e-5);
  EXPECT_NEAR(lse[0], std::log(4.0), 1e-6);
  // Causal, two positions: query 0 sees key 0 only (O = V[0], lse = its score 3 * 0.5); query
  // 1 sees both, with scores 2.5 and 0, so key 0 weighs sigmoid(2.5).
  dims = AttentionDims{1, 2, 2, 1, true};
  AttentionForward(dims, {3, 5}, {0.5f, 0}, {10, 20}, o, lse);
  EXPECT_NEAR(o[0], 10, 1e-5);
  EXPECT_NEAR(lse[0], 1.5, 1e-6);
  const double w0 = 1 / (1 + std::exp(-2.5));
  EXPECT_NEAR(o[1], 10 * w0 + 20 * (1 - w0), 1e-4);
  EXPECT_NEAR(lse[1], std::log(std::exp(2.5) + 1), 1e-6);
}

// L(Q, K, V) = sum(O * G): its gradients are the backward's dQ, dK, dV for dO = G.
double Loss(const AttentionDims& dims, const std::vector<float>& q, const std::vector<float>& k,
            const std::vector<float>& v, const std::vector<float>& g) {
  std::vector<float> o, lse;
  AttentionForward(dims, q, k, v, o, lse);
  double l = 0;
  for (std::size_t i = 0; i < o.size(); ++i) l += static_cast<double>(o[i]) * g[i];
  return l;
}

std::vector<float> Lcg(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / 8388608.0f - 1.0f;  // [-1, 1)
  }
  return v;
}

TEST(Reference, AttentionBackwardMatchesFiniteDifferences) {
  for (bool causal : {false, true}) {
    const AttentionDims dims{2, 3, causal ? 3 : 4, 2, causal};
    const std::size_t nq = 2 * 3 * 2, nkv = 2 * dims.s_kv * 2;
    std::vector<float> q = Lcg(nq, 1), k = Lcg(nkv, 2), v = Lcg(nkv, 3);
    const std::vector<float> g = Lcg(nq, 4);
    std::vector<float> dq, dk, dv;
    AttentionBackward(dims, q, k, v, g, dq, dk, dv);
    // Central differences of a float forward: error about eps_float * |L| / h, far below 1e-3.
    const float h = 1e-2f;
    auto check = [&](std::vector<float>& x, const std::vector<float>& grad, const char* what) {
      for (std::size_t i = 0; i < x.size(); ++i) {
        const float keep = x[i];
        x[i] = keep + h;
        const double up = Loss(dims, q, k, v, g);
        x[i] = keep - h;
        const double down = Loss(dims, q, k, v, g);
        x[i] = keep;
        EXPECT_NEAR(grad[i], (up - down) / (2 * h), 1e-3)
            << what << "[" << i << "] causal " << causal;
      }
    };
    check(q, dq, "dQ");
    check(k, dk, "dK");
    check(v, dv, "dV");
  }
}

TEST(Reference, AttentionRejectsMismatchedSizes) {
  std::vector<float> o, lse;
  try {
    AttentionForward(AttentionDims{1, 2, 3, 2, false}, {1, 2, 3, 4}, {1, 2}, {1, 2}, o, lse);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "reference::Attention: Q has 4, K 2 and V 2 values; batch * s_q * d = 4 and "
                 "batch * s_kv * d = 6 expected");
  }
  try {
    AttentionForward(AttentionDims{1, 1, 2, 1, true}, {1}, {1, 2}, {1, 2}, o, lse);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "reference::Attention: a causal mask needs s_q == s_kv");
  }
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
