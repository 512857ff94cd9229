#include "kernels/quantize.h"

#include <gtest/gtest.h>

#include "kernels/gpu_test_util.h"
#include "kernels/reference.h"

namespace stratasim::kernels {
namespace {

using testing::AllClose;
using testing::Download;
using testing::RandomVector;
using testing::Upload;

class QuantizeTest : public ::testing::TestWithParam<DType> {};

TEST_P(QuantizeTest, MatchesReferenceExactly) {
  STRATASIM_REQUIRE_GPU();
  const DType dt = GetParam();
  const long long n = 10000;  // last block partial
  const int block = 512;
  std::vector<float> x = RandomVector(n, 21, -3, 3);
  for (int i = 1024; i < 1536; ++i) x[i] = 0;  // an all-zero block: scale 1
  DeviceBuffer dx = Upload(dt, x);
  const long long blocks = (n + block - 1) / block;
  DeviceBuffer dq(n), ds(blocks * sizeof(float));
  QuantizeInt8(dt, dx.get(), n, block, dq.as<std::int8_t>(), ds.as<float>(), nullptr);
  std::vector<std::int8_t> q(n), want_q;
  std::vector<float> s(blocks), want_s;
  STRATASIM_CUDA_CHECK(cudaMemcpy(q.data(), dq.get(), n, cudaMemcpyDeviceToHost));
  STRATASIM_CUDA_CHECK(cudaMemcpy(s.data(), ds.get(), ds.bytes(), cudaMemcpyDeviceToHost));
  reference::QuantizeInt8(x, block, want_q, want_s);
  EXPECT_EQ(s, want_s);
  EXPECT_EQ(q, want_q);

  DeviceBuffer dy(dx.bytes());
  DequantizeInt8(dt, dq.as<std::int8_t>(), ds.as<float>(), n, block, dy.get(), nullptr);
  EXPECT_TRUE(AllClose(Download(dt, dy, n), reference::DequantizeInt8(want_q, want_s, block),
                       testing::UnitRoundoff(dt), 1e-7));
}

INSTANTIATE_TEST_SUITE_P(Formats, QuantizeTest,
                         ::testing::Values(DType::kFP32, DType::kFP16, DType::kBF16),
                         [](const auto& info) { return std::string(ToString(info.param)); });

TEST(Quantize, RejectsBadBlock) {
  try {
    QuantizeInt8(DType::kFP32, nullptr, 10, 0, nullptr, nullptr, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "QuantizeInt8: block 0 must be in [1, 2^20] with fewer than 2^31 blocks");
  }
}

}  // namespace
}  // namespace stratasim::kernels
