#include "kernels/bit_quantize.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kernels/gpu_test_util.h"

namespace stratasim::kernels {
namespace {

using reference::BitFormat;
using reference::BitPrecision;
using testing::RandomVector;

class BitQuantizeTest : public ::testing::TestWithParam<BitPrecision> {};

// The kernel against the CPU reference, bit for bit: the same IEEE operations in the same order.
TEST_P(BitQuantizeTest, MatchesReferenceExactly) {
  STRATASIM_REQUIRE_GPU();
  const BitPrecision p = GetParam();
  const long long n = 100003;
  std::vector<float> x = RandomVector(n, 7, -3, 3);
  x[5] = 1e-6f;    // FP8 subnormal range
  x[6] = 1000.0f;  // beyond E4M3's 448: saturates
  x[7] = -70000;   // beyond E5M2's 57344 and FP16's 65504
  DeviceBuffer dx(n * sizeof(float)), dy(n * sizeof(float)), ds(sizeof(float));
  STRATASIM_CUDA_CHECK(cudaMemcpy(dx.get(), x.data(), dx.bytes(), cudaMemcpyHostToDevice));
  BitQuantize(dx.as<float>(), n, p, dy.as<float>(), ds.as<float>(), nullptr);
  std::vector<float> y(n);
  float scale = 0;
  STRATASIM_CUDA_CHECK(cudaMemcpy(y.data(), dy.get(), dy.bytes(), cudaMemcpyDeviceToHost));
  STRATASIM_CUDA_CHECK(cudaMemcpy(&scale, ds.get(), sizeof(float), cudaMemcpyDeviceToHost));
  const reference::BitQuantized want = reference::QuantizeDequantize(x, p);
  EXPECT_EQ(scale, want.scale);
  int bad = 0;
  for (long long i = 0; i < n; ++i) {
    if (!(y[i] == want.values[i] || (std::isinf(y[i]) && y[i] == want.values[i]))) {
      if (bad++ < 5)
        ADD_FAILURE() << "[" << i << "] x " << x[i] << " got " << y[i] << " want "
                      << want.values[i];
    }
  }
  EXPECT_EQ(bad, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, BitQuantizeTest,
    ::testing::Values(BitPrecision{BitFormat::kInt, 2}, BitPrecision{BitFormat::kInt, 4},
                      BitPrecision{BitFormat::kInt, 8}, BitPrecision{BitFormat::kFp8E4M3, 8},
                      BitPrecision{BitFormat::kFp8E5M2, 8}, BitPrecision{BitFormat::kFp16, 16},
                      BitPrecision{BitFormat::kBf16, 16}),
    [](const auto& info) { return reference::ToString(info.param); });

TEST(BitQuantize, AllZeroTensorHasScaleOne) {
  STRATASIM_REQUIRE_GPU();
  const long long n = 1000;
  DeviceBuffer dx(n * sizeof(float)), dy(n * sizeof(float)), ds(sizeof(float));
  STRATASIM_CUDA_CHECK(cudaMemset(dx.get(), 0, dx.bytes()));
  BitQuantize(dx.as<float>(), n, {BitFormat::kInt, 4}, dy.as<float>(), ds.as<float>(), nullptr);
  float scale = 0;
  STRATASIM_CUDA_CHECK(cudaMemcpy(&scale, ds.get(), sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_EQ(scale, 1.0f);
}

TEST(BitQuantize, RejectsBadBits) {
  try {
    BitQuantize(nullptr, 10, {BitFormat::kInt, 9}, nullptr, nullptr, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "BitQuantize int9: bits must be in [2, 8]");
  }
}

}  // namespace
}  // namespace stratasim::kernels
