#include "kernels/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "kernels/attention.h"
#include "kernels/gpu_test_util.h"
#include "kernels/reference.h"

namespace stratasim::kernels {
namespace {

using testing::AllClose;
using testing::Download;
using testing::RandomVector;
using testing::Upload;

// Reference C for the GEMM of `p` on rounded inputs, and the tolerance of each format: FP32
// accumulation everywhere (errors ~ sqrt(k) ulps), TF32 tensor cores round the inputs to 10
// mantissa bits, 16-bit outputs are rounded once.
struct Tolerance {
  double rtol, atol;
};
Tolerance ToleranceFor(DType dt, long long k) {
  const double sk = std::sqrt(static_cast<double>(k));
  switch (dt) {
    case DType::kTF32:
      return {std::ldexp(1.0, -10), 4 * sk * std::ldexp(1.0, -11)};
    case DType::kFP16:
      return {std::ldexp(1.0, -10), 1e-3 * sk};
    case DType::kBF16:
      return {std::ldexp(1.0, -7), 1e-3 * sk};
    default:
      return {1e-5, 1e-5 * sk};
  }
}

using GemmCase = std::tuple<DType, bool>;  // format, B stored [n][k]
class GemmTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmTest, BatchedGemmMatchesReference) {
  STRATASIM_REQUIRE_GPU();
  const auto [dt, bt] = GetParam();
  // Odd sizes: no dimension is a multiple of a tile.
  const GemmProblem p{dt, 67, 45, 129, 3, bt};
  std::vector<float> a = RandomVector(p.m * p.k * p.batch, 31, -1, 1);
  std::vector<float> b = RandomVector(p.k * p.n * p.batch, 32, -1, 1);
  DeviceBuffer da = Upload(dt, a), db = Upload(dt, b);
  DeviceBuffer dc(static_cast<std::size_t>(p.bytes_c()));
  Blas blas;
  blas.Gemm(p, da.get(), db.get(), dc.get(), nullptr);
  const std::vector<float> want = reference::Gemm(a, b, p.m, p.n, p.k, p.batch, bt);
  const Tolerance t = ToleranceFor(dt, p.k);
  EXPECT_TRUE(AllClose(Download(dt, dc, p.m * p.n * p.batch), want, t.rtol, t.atol));
}

INSTANTIATE_TEST_SUITE_P(FormatsAndLayouts, GemmTest,
                         ::testing::Combine(::testing::Values(DType::kFP32, DType::kTF32,
                                                              DType::kFP16, DType::kBF16),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(ToString(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_BnK" : "_BkN");
                         });

TEST(Gemm, Int8AccumulatesExactlyInInt32) {
  STRATASIM_REQUIRE_GPU();
  const GemmProblem p{DType::kINT8, 64, 32, 96, 2, true};
  std::vector<float> a = RandomVector(p.m * p.k * p.batch, 41, -127, 127);
  std::vector<float> b = RandomVector(p.k * p.n * p.batch, 42, -127, 127);
  DeviceBuffer da = Upload(DType::kINT8, a), db = Upload(DType::kINT8, b);
  DeviceBuffer dc(static_cast<std::size_t>(p.bytes_c()));
  Blas blas;
  blas.Gemm(p, da.get(), db.get(), dc.get(), nullptr);
  std::vector<std::int32_t> c(p.m * p.n * p.batch);
  STRATASIM_CUDA_CHECK(cudaMemcpy(c.data(), dc.get(), dc.bytes(), cudaMemcpyDeviceToHost));
  const std::vector<float> want = reference::Gemm(a, b, p.m, p.n, p.k, p.batch, true);
  std::vector<float> got(c.begin(), c.end());
  EXPECT_TRUE(AllClose(got, want, 0, 0));  // |sums| < 2^24: exact in float too
}

TEST(Gemm, Fp8MatchesReferenceOnHopper) {
  STRATASIM_REQUIRE_GPU();
  cudaDeviceProp prop{};
  STRATASIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major * 10 + prop.minor < 89) GTEST_SKIP() << "FP8 needs compute capability 8.9+";
  const GemmProblem p{DType::kFP8, 64, 48, 128, 2, true};
  std::vector<float> a = RandomVector(p.m * p.k * p.batch, 51, -2, 2);
  std::vector<float> b = RandomVector(p.k * p.n * p.batch, 52, -2, 2);
  DeviceBuffer da = Upload(DType::kFP8, a), db = Upload(DType::kFP8, b);
  DeviceBuffer dc(static_cast<std::size_t>(p.bytes_c()));
  Blas blas;
  blas.Gemm(p, da.get(), db.get(), dc.get(), nullptr);
  // Inputs are exactly the E4M3 values; FP32 accumulation; one BF16 rounding of the output.
  EXPECT_TRUE(AllClose(Download(DType::kBF16, dc, p.m * p.n * p.batch),
                       reference::Gemm(a, b, p.m, p.n, p.k, p.batch, true), std::ldexp(1.0, -7),
                       1e-3));
}

TEST(Gemm, RejectsFormatsWithoutAGemm) {
  STRATASIM_REQUIRE_GPU();  // Blas needs a device
  Blas blas;
  try {
    blas.Gemm(GemmProblem{DType::kINT4, 16, 16, 16, 1, true}, nullptr, nullptr, nullptr, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "int4 GEMM m=16 n=16 k=16 batch=1: no GEMM for this format (fp32, tf32, fp16, "
                 "bf16, int8, fp8)");
  }
}

TEST(Gemm, OutputBytesFollowTheFormat) {
  // No device needed: the sizes the backend allocates.
  const GemmProblem p{DType::kINT8, 4, 8, 16, 2, true};
  EXPECT_EQ(p.bytes_a(), 4 * 16 * 2);
  EXPECT_EQ(p.bytes_b(), 16 * 8 * 2);
  EXPECT_EQ(p.bytes_c(), 4 * 8 * 2 * 4);  // INT32 accumulators
  EXPECT_EQ(GemmOutputBytesPerElement(DType::kFP8), 2);
  EXPECT_EQ(p.flops(), 2.0 * 4 * 8 * 16 * 2);
}

class AttentionTest : public ::testing::TestWithParam<DType> {};

TEST_P(AttentionTest, UnfusedAttentionMatchesReference) {
  STRATASIM_REQUIRE_GPU();
  const DType dt = GetParam();
  const AttentionShape s{4, 80, 64};
  const long long qkv = s.batch_heads * s.seq * s.head_dim;
  std::vector<float> q = RandomVector(qkv, 61, -1, 1), k = RandomVector(qkv, 62, -1, 1),
                     v = RandomVector(qkv, 63, -1, 1);
  DeviceBuffer dq = Upload(dt, q), dk = Upload(dt, k), dv = Upload(dt, v);
  DeviceBuffer scores(
      static_cast<std::size_t>(s.batch_heads * s.seq * s.seq * BytesPerElement(dt)));
  DeviceBuffer out(dq.bytes());
  Blas blas;
  AttentionForward(blas, dt, s, dq.get(), dk.get(), dv.get(), scores.get(), out.get(), nullptr);
  // Reference: the same three steps in double, without the intermediate roundings.
  std::vector<float> sc = reference::Gemm(q, k, s.seq, s.seq, s.head_dim, s.batch_heads, true);
  std::vector<float> pr = reference::Softmax(sc, s.seq, 1.0f / 8);
  std::vector<float> want = reference::Gemm(pr, v, s.seq, s.head_dim, s.seq, s.batch_heads, false);
  // Outputs are averages of values in [-1, 1]; 16-bit formats round S, P and O.
  const double tol = dt == DType::kBF16 ? 2e-2 : dt == DType::kFP16 ? 4e-3 : 1e-3;
  EXPECT_TRUE(AllClose(Download(dt, out, qkv), want, tol, tol));
}

INSTANTIATE_TEST_SUITE_P(Formats, AttentionTest,
                         ::testing::Values(DType::kFP32, DType::kFP16, DType::kBF16),
                         [](const auto& info) { return std::string(ToString(info.param)); });

}  // namespace
}  // namespace stratasim::kernels
