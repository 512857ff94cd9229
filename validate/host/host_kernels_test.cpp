#include "validate/host/host_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "kernels/reference.h"

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

Task FusedAttentionOf(Phase phase, double s, double d, double batch, bool causal, DType dtype) {
  Task t;
  t.op = OpKind::kFusedAttention;
  t.phase = phase;
  t.dtype = dtype;
  t.causal = causal;
  t.gemm = GemmShape{s, s, d, batch};
  t.flops = 4 * s * s * d * batch;
  return t;
}

std::string ErrorOf(const Task& t) {
  try {
    ComputeWorkspaceBytes(t);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(HostKernels, FusedAttentionBuffersHoldOneEntryAndShareTheForwardsPlaces) {
  const Task fwd = FusedAttentionOf(Phase::kForward, 100, 16, 8, true, DType::kBF16);
  const FusedAttentionBuffers f = FusedAttentionLayout(fwd);
  EXPECT_EQ(f.dims.batch, 1);
  EXPECT_EQ(f.dims.s_q, 100);
  EXPECT_EQ(f.dims.d, 16);
  EXPECT_TRUE(f.dims.causal);
  EXPECT_FALSE(f.backward);
  EXPECT_EQ(f.k, 3200);  // 100 x 16 BF16 values, 64-byte aligned
  EXPECT_EQ(f.lse, 4 * 3200);
  EXPECT_EQ(ComputeWorkspaceBytes(fwd), f.total);
  Task bwd = fwd;
  bwd.phase = Phase::kBackward;
  const FusedAttentionBuffers b = FusedAttentionLayout(bwd);
  EXPECT_TRUE(b.backward);
  EXPECT_EQ(b.o, f.o);
  EXPECT_EQ(b.lse, f.lse);
  EXPECT_GT(b.total, f.total);
  // A recompute is the forward again.
  Task re = fwd;
  re.phase = Phase::kRecompute;
  EXPECT_FALSE(FusedAttentionLayout(re).backward);
  // Batch entries reuse the buffers: the workspace does not grow with the batch.
  EXPECT_EQ(
      ComputeWorkspaceBytes(FusedAttentionOf(Phase::kForward, 100, 16, 64, true, DType::kBF16)),
      f.total);
}

TEST(HostKernels, FusedAttentionTasksRunTheBlockedKernelOnTheirBuffers) {
  // Forward then backward on one workspace, as a lane runs a layer: the forward's O and lse
  // match the reference, and the backward (reading them) gives the reference's gradients.
  const int s = 19, d = 6;
  const Task fwd = FusedAttentionOf(Phase::kForward, s, d, 3, true, DType::kFP32);
  Task bwd = fwd;
  bwd.phase = Phase::kBackward;
  const FusedAttentionBuffers l = FusedAttentionLayout(bwd);
  std::vector<unsigned char> ws(static_cast<std::size_t>(ComputeWorkspaceBytes(bwd)));
  auto fill = [&](double offset, int n, float scale) {
    std::vector<float> v(n);
    for (int i = 0; i < n; ++i) v[i] = scale * std::sin(0.7f * i + offset / 64);
    std::memcpy(ws.data() + static_cast<std::size_t>(offset), v.data(), n * sizeof(float));
    return v;
  };
  auto read = [&](double offset, int n) {
    std::vector<float> v(n);
    std::memcpy(v.data(), ws.data() + static_cast<std::size_t>(offset), n * sizeof(float));
    return v;
  };
  const std::vector<float> q = fill(l.q, s * d, 2), k = fill(l.k, s * d, 2),
                           v = fill(l.v, s * d, 1);
  RunCompute(fwd, ws.data());
  // The forward's scratch lies where the backward keeps dO: filled after the forward ran.
  const std::vector<float> dout = fill(l.dout, s * d, 1);
  const kernels::reference::AttentionDims rd{1, s, s, d, true};
  std::vector<float> o, lse, dq, dk, dv;
  kernels::reference::AttentionForward(rd, q, k, v, o, lse);
  kernels::reference::AttentionBackward(rd, q, k, v, dout, dq, dk, dv);
  auto near = [](const std::vector<float>& got, const std::vector<float>& want, const char* what) {
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << what << i;
  };
  near(read(l.o, s * d), o, "O");
  near(read(l.lse, s), lse, "lse");
  RunCompute(bwd, ws.data());
  near(read(l.dq, s * d), dq, "dQ");
  near(read(l.dk, s * d), dk, "dK");
  near(read(l.dv, s * d), dv, "dV");
}

TEST(HostKernels, FusedAttentionInHalfFormatsRunsOnTheTouchedWorkspace) {
  // The executor fills workspaces with 0x3c bytes; every format reads them as finite values.
  for (DType dt : {DType::kBF16, DType::kFP16, DType::kTF32}) {
    for (Phase ph : {Phase::kForward, Phase::kBackward}) {
      const Task t = FusedAttentionOf(ph, 70, 8, 2, false, dt);
      std::vector<unsigned char> ws(static_cast<std::size_t>(ComputeWorkspaceBytes(t)), 0x3c);
      RunCompute(t, ws.data());
    }
  }
}

TEST(HostKernels, FusedAttentionBadTasksAreRefusedWithTheReason) {
  Task t = FusedAttentionOf(Phase::kForward, 64, 16, 1, true, DType::kFP8);
  EXPECT_EQ(ErrorOf(t),
            "fused attention: no CPU kernel for dtype fp8 (it runs fp32, tf32, fp16 and bf16)");
  t.dtype = DType::kBF16;
  t.gemm.n = 32;
  EXPECT_EQ(ErrorOf(t),
            "fused attention: a causal mask needs as many queries as keys (s_q 64, s_kv 32)");
  t.gemm = GemmShape{};
  EXPECT_EQ(ErrorOf(t),
            "fused attention task has no shape (gemm batch = sequences x heads, m = query rows, "
            "n = key rows, k = head dimension)");
  t.gemm = GemmShape{4e12, 4e12, 128, 1};
  EXPECT_EQ(ErrorOf(t), "fused attention: s_q 4e+12, s_kv 4e+12 and d 128 must be below 2^31");
}

}  // namespace
}  // namespace stratasim::validate::host
