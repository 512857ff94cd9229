#include "kernels/convert.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels/gpu_test_util.h"

namespace stratasim::kernels {
namespace {

using testing::Download;
using testing::Upload;

TEST(Convert, RoundTripsRepresentableValuesExactly) {
  STRATASIM_REQUIRE_GPU();
  // Small integers and halves are exact in every format here (E4M3 holds integers to 16).
  const std::vector<float> exact = {0, 1, -2, 3.5f, 8, -16, 0.5f, 12};
  for (DType dt : {DType::kFP32, DType::kFP16, DType::kBF16, DType::kFP8}) {
    std::vector<float> x = exact;
    DeviceBuffer d = Upload(dt, x);
    EXPECT_EQ(x, exact) << ToString(dt);
    EXPECT_EQ(Download(dt, d, x.size()), exact) << ToString(dt);
  }
}

TEST(Convert, RoundsToNearestEvenAndSaturatesInt8) {
  STRATASIM_REQUIRE_GPU();
  // 1 + 2^-9 is between two BF16 values (ulp 2^-7 at 1); 1 + 3 * 2^-8 rounds up to 1 + 2^-6.
  std::vector<float> b = {1.0f + std::ldexp(1.0f, -9), 1.0f + 3 * std::ldexp(1.0f, -8)};
  Upload(DType::kBF16, b);
  EXPECT_EQ(b[0], 1.0f);
  EXPECT_EQ(b[1], 1.0f + std::ldexp(1.0f, -6));
  std::vector<float> i = {2.5f, 3.5f, -2.5f, 300, -300};
  Upload(DType::kINT8, i);
  EXPECT_EQ(i, (std::vector<float>{2, 4, -2, 127, -128}));
}

TEST(Convert, FillIsReproducibleAndInRange) {
  STRATASIM_REQUIRE_GPU();
  const long long n = 4096;
  DeviceBuffer a(n * 2), b(n * 2);
  FillUniform(DType::kBF16, a.get(), n, 7, -1, 1, nullptr);
  FillUniform(DType::kBF16, b.get(), n, 7, -1, 1, nullptr);
  const std::vector<float> x = Download(DType::kBF16, a, n), y = Download(DType::kBF16, b, n);
  EXPECT_EQ(x, y);
  EXPECT_LE(*std::max_element(x.begin(), x.end()), 1.0f);
  EXPECT_GE(*std::min_element(x.begin(), x.end()), -1.0f);
  double mean = 0;
  for (float v : x) mean += v;
  EXPECT_NEAR(mean / n, 0, 0.05);  // uniform: mean 0, standard error ~0.009
  FillUniform(DType::kBF16, b.get(), n, 8, -1, 1, nullptr);
  EXPECT_NE(Download(DType::kBF16, b, n), x);  // another seed, another tensor
}

TEST(Convert, RejectsFormatsWithoutAConversion) {
  try {
    ToFloat(DType::kINT4, nullptr, nullptr, 2, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "ToFloat: dtype int4 is not supported (fp32, tf32, fp16, bf16, fp8, int8 are)");
  }
}

}  // namespace
}  // namespace stratasim::kernels
