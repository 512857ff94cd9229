#include "kernels/elementwise.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "kernels/gpu_test_util.h"
#include "kernels/reference.h"

namespace stratasim::kernels {
namespace {

using testing::AllClose;
using testing::Download;
using testing::RandomVector;
using testing::UnitRoundoff;
using testing::Upload;

class ElementwiseTest : public ::testing::TestWithParam<DType> {};

TEST_P(ElementwiseTest, ScaleAddMatchesReference) {
  STRATASIM_REQUIRE_GPU();
  const DType dt = GetParam();
  const long long n = 100003;  // not a multiple of the block: the tail is covered
  std::vector<float> x = RandomVector(n, 1, -4, 4), y = RandomVector(n, 2, -4, 4);
  DeviceBuffer dx = Upload(dt, x), dy = Upload(dt, y);
  ScaleAdd(dt, 0.5f, dx.get(), dy.get(), n, nullptr);
  reference::ScaleAdd(0.5f, x, y);
  // One rounding of the result to the format (inputs are already rounded).
  EXPECT_TRUE(AllClose(Download(dt, dy, n), y, 2 * UnitRoundoff(dt), 1e-6));
}

TEST_P(ElementwiseTest, GeluMatchesReference) {
  STRATASIM_REQUIRE_GPU();
  const DType dt = GetParam();
  const long long n = 65537;
  std::vector<float> x = RandomVector(n, 3, -6, 6);
  DeviceBuffer dx = Upload(dt, x);
  DeviceBuffer dy(dx.bytes());
  Gelu(dt, dx.get(), dy.get(), n, nullptr);
  EXPECT_TRUE(AllClose(Download(dt, dy, n), reference::Gelu(x), 2 * UnitRoundoff(dt), 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Formats, ElementwiseTest,
                         ::testing::Values(DType::kFP32, DType::kFP16, DType::kBF16),
                         [](const auto& info) { return std::string(ToString(info.param)); });

TEST(Elementwise, RejectsFormatsWithoutAKernel) {
  // Dispatch fails before any launch, so this holds with or without a GPU.
  try {
    Gelu(DType::kINT4, nullptr, nullptr, 8, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "Gelu: dtype int4 is not supported (fp32, tf32, fp16, bf16 are)");
  }
}

}  // namespace
}  // namespace stratasim::kernels
