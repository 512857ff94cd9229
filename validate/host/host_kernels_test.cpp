#include "validate/host/host_kernels.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"

namespace stratasim::validate::host {
namespace {

Task GemmOf(double m, double n, double k, DType d) {
  Task t;
  t.op = OpKind::kGemm;
  t.dtype = d;
  t.gemm = GemmShape{m, n, k, 1};
  t.flops = 2 * m * n * k;
  return t;
}

TEST(HostKernels, GemmComputesTheProductInColumnMajorBuffers) {
  const Task t = GemmOf(3, 2, 4, DType::kFP32);
  ASSERT_EQ(ComputeWorkspaceBytes(t), (3 * 4 + 4 * 2 + 3 * 2) * 4.0);
  std::vector<float> ws(3 * 4 + 4 * 2 + 3 * 2, 0);
  for (int i = 0; i < 12; ++i) ws[i] = static_cast<float>(i);      // A (3 x 4)
  for (int i = 0; i < 8; ++i) ws[12 + i] = static_cast<float>(i);  // B (4 x 2)
  RunCompute(t, reinterpret_cast<unsigned char*>(ws.data()));
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 2; ++c) {
      float want = 0;
      for (int k = 0; k < 4; ++k) want += ws[k * 3 + r] * ws[12 + c * 4 + k];
      EXPECT_EQ(ws[20 + c * 3 + r], want) << r << "," << c;
    }
  }
}

TEST(HostKernels, HalfPrecisionGemmsRunInTwoByteBuffers) {
  EXPECT_EQ(ComputeWorkspaceBytes(GemmOf(8, 8, 8, DType::kBF16)), 3 * 64 * 2.0);
  std::vector<unsigned char> ws(3 * 64 * 2, 0x3c);
  RunCompute(GemmOf(8, 8, 8, DType::kBF16), ws.data());
  RunCompute(GemmOf(8, 8, 8, DType::kFP16), ws.data());
}

TEST(HostKernels, ShapelessGemmRunsAsACubeOfItsFlops) {
  Task t;
  t.op = OpKind::kGemm;
  t.flops = 2 * 64.0 * 64 * 64;
  const GemmShape s = HostGemmShape(t);
  EXPECT_EQ(s.m, 64);
  EXPECT_EQ(s.n, 64);
  EXPECT_EQ(s.k, 64);
  t.op = OpKind::kElementwise;
  EXPECT_FALSE(HostGemmShape(t).known());
}

TEST(HostKernels, MemoryLoopWritesTheSecondHalf) {
  std::vector<float> ws(8, 2.0f);
  RunMemoryLoop(8 * sizeof(float), reinterpret_cast<unsigned char*>(ws.data()));
  for (int i = 4; i < 8; ++i) EXPECT_FLOAT_EQ(ws[i], 1.0001f * 2 + 0.5f);
}

TEST(HostKernels, Fp8GemmIsRefusedNamingTheDtype) {
  try {
    ComputeWorkspaceBytes(GemmOf(8, 8, 8, DType::kFP8));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "host backend: no CPU GEMM for dtype fp8 (it runs fp32, tf32, fp16 and bf16)");
  }
}

}  // namespace
}  // namespace stratasim::validate::host
