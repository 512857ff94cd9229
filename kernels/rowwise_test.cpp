#include "kernels/rowwise.h"

#include <gtest/gtest.h>

#include "kernels/gpu_test_util.h"
#include "kernels/reference.h"

namespace stratasim::kernels {
namespace {

using testing::AllClose;
using testing::Download;
using testing::RandomVector;
using testing::UnitRoundoff;
using testing::Upload;

class RowwiseTest : public ::testing::TestWithParam<DType> {};

TEST_P(RowwiseTest, SoftmaxMatchesReference) {
  STRATASIM_REQUIRE_GPU();
  const DType dt = GetParam();
  // 1000 columns: not a multiple of the block, so threads hold uneven shares of a row.
  const int rows = 37, cols = 1000;
  std::vector<float> x = RandomVector(rows * cols, 5, -30, 30);
  DeviceBuffer dx = Upload(dt, x);
  DeviceBuffer dy(dx.bytes());
  Softmax(dt, dx.get(), dy.get(), rows, cols, 0.125f, nullptr);
  EXPECT_TRUE(AllClose(Download(dt, dy, rows * cols), reference::Softmax(x, cols, 0.125f),
                       4 * UnitRoundoff(dt) + 1e-5, 1e-7));
}

TEST_P(RowwiseTest, LayerNormMatchesReference) {
  STRATASIM_REQUIRE_GPU();
  const DType dt = GetParam();
  const int rows = 19, cols = 768;
  std::vector<float> x = RandomVector(rows * cols, 7, 2, 6);  // mean far from 0
  std::vector<float> gamma = RandomVector(cols, 8, 0.5f, 1.5f), beta = RandomVector(cols, 9, -1, 1);
  DeviceBuffer dx = Upload(dt, x), dg = Upload(DType::kFP32, gamma),
               db = Upload(DType::kFP32, beta);
  DeviceBuffer dy(dx.bytes());
  LayerNorm(dt, dx.get(), dg.as<float>(), db.as<float>(), dy.get(), rows, cols, 1e-5f, nullptr);
  EXPECT_TRUE(AllClose(Download(dt, dy, rows * cols), reference::LayerNorm(x, gamma, beta, 1e-5f),
                       2 * UnitRoundoff(dt), 1e-4));
}

INSTANTIATE_TEST_SUITE_P(Formats, RowwiseTest,
                         ::testing::Values(DType::kFP32, DType::kFP16, DType::kBF16),
                         [](const auto& info) { return std::string(ToString(info.param)); });

TEST(Rowwise, RejectsEmptyRows) {
  try {
    Softmax(DType::kFP32, nullptr, nullptr, 4, 0, 1, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "Softmax: 4 rows of 0 columns: need cols > 0 and rows < 2^31");
  }
}

}  // namespace
}  // namespace stratasim::kernels
