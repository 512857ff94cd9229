#include "kernels/adam.h"

#include <gtest/gtest.h>

#include "kernels/gpu_test_util.h"

namespace stratasim::kernels {
namespace {

using testing::AllClose;
using testing::Download;
using testing::RandomVector;
using testing::Upload;

class AdamTest : public ::testing::TestWithParam<DType> {};

TEST_P(AdamTest, ThreeStepsMatchReference) {
  STRATASIM_REQUIRE_GPU();
  const DType dt = GetParam();
  const long long n = 50001;
  std::vector<float> p = RandomVector(n, 11, -1, 1), m(n, 0), v(n, 0);
  DeviceBuffer dp = Upload(DType::kFP32, p), dm = Upload(DType::kFP32, m),
               dv = Upload(DType::kFP32, v);
  reference::AdamConfig c;
  c.lr = 1e-2f;
  c.weight_decay = 0.1f;
  for (int step = 1; step <= 3; ++step) {
    std::vector<float> g = RandomVector(n, 100 + step, -0.5f, 0.5f);
    DeviceBuffer dg = Upload(dt, g);
    c.step = step;
    AdamStep(c, dt, dp.as<float>(), dg.get(), dm.as<float>(), dv.as<float>(), n, nullptr);
    reference::AdamStep(c, p, g, m, v);
  }
  // FP32 arithmetic on the GPU against double on the CPU: a few ulps of the update.
  EXPECT_TRUE(AllClose(Download(DType::kFP32, dp, n), p, 1e-5, 1e-6));
  EXPECT_TRUE(AllClose(Download(DType::kFP32, dm, n), m, 1e-5, 1e-7));
  EXPECT_TRUE(AllClose(Download(DType::kFP32, dv, n), v, 1e-5, 1e-9));
}

INSTANTIATE_TEST_SUITE_P(GradientFormats, AdamTest,
                         ::testing::Values(DType::kFP32, DType::kFP16, DType::kBF16),
                         [](const auto& info) { return std::string(ToString(info.param)); });

TEST(Adam, RejectsStepZero) {
  reference::AdamConfig c;
  c.step = 0;
  try {
    AdamStep(c, DType::kFP32, nullptr, nullptr, nullptr, nullptr, 1, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "AdamStep: step must be >= 1, got 0");
  }
}

}  // namespace
}  // namespace stratasim::kernels
