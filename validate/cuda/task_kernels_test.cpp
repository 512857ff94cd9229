// Which kernel each compute task becomes: pure planning, no device needed (runs in CI).
#include "validate/cuda/task_kernels.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim::validate::cuda {
namespace {

Task Compute(OpKind op, DType dtype, const std::string& name) {
  Task t;
  t.id = 7;
  t.kind = TaskKind::kCompute;
  t.op = op;
  t.dtype = dtype;
  t.name = name;
  return t;
}

TEST(TaskKernels, GemmAndAttentionTasksKeepTheirShapeAndFormat) {
  Task t = Compute(OpKind::kAttention, DType::kBF16, "attn_scores");
  t.gemm = GemmShape{1024, 1024, 64, 96};
  const KernelPlan p = PlanKernel(t);
  EXPECT_EQ(p.kind, KernelKind::kGemm);
  EXPECT_EQ(p.gemm.dtype, DType::kBF16);
  EXPECT_EQ(p.gemm.m, 1024);
  EXPECT_EQ(p.gemm.n, 1024);
  EXPECT_EQ(p.gemm.k, 64);
  EXPECT_EQ(p.gemm.batch, 96);
  EXPECT_DOUBLE_EQ(p.flops, 2.0 * 1024 * 1024 * 64 * 96);
  EXPECT_EQ(p.buffers[0], 1024u * 64 * 96 * 2);  // A in BF16
  EXPECT_EQ(p.buffers[2], 1024u * 1024 * 96 * 2);
}

TEST(TaskKernels, LowPrecisionGemmsFollowCublasAlignment) {
  Task t = Compute(OpKind::kGemm, DType::kFP8, "mlp_up");
  t.gemm = GemmShape{1000, 3000, 1000, 1};
  KernelPlan p = PlanKernel(t);
  EXPECT_EQ(p.gemm.m, 1008);  // up to multiples of 16
  EXPECT_EQ(p.gemm.k, 1008);
  EXPECT_EQ(p.buffers[2], 1008u * 3008 * 2);  // BF16 output
  t.dtype = DType::kINT4;                     // no INT4 GEMM in cuBLAS: INT8, k to a multiple of 4
  t.gemm = GemmShape{10, 10, 10, 1};
  p = PlanKernel(t);
  EXPECT_EQ(p.gemm.dtype, DType::kINT8);
  EXPECT_EQ(p.gemm.k, 12);
  EXPECT_EQ(p.buffers[2], 10u * 10 * 4);  // INT32 accumulators
}

TEST(TaskKernels, ShapelessGemmBecomesASquareGemmOfTheSameFlops) {
  Task t = Compute(OpKind::kOther, DType::kFP16, "op");
  t.flops = 2.0 * 512 * 512 * 512;
  const KernelPlan p = PlanKernel(t);
  EXPECT_EQ(p.kind, KernelKind::kGemm);
  EXPECT_EQ(p.gemm.m, 512);
  EXPECT_EQ(p.gemm.n, 512);
  EXPECT_DOUBLE_EQ(p.flops, t.flops);
}

TEST(TaskKernels, OptimizerIsAdamOverTheTasksParameters) {
  Task t = Compute(OpKind::kOptimizer, DType::kFP32, "adam");
  t.flops = 10 * 1e6;  // AdamStepTask: 10 FLOPs per parameter
  const KernelPlan p = PlanKernel(t);
  EXPECT_EQ(p.kind, KernelKind::kAdam);
  EXPECT_EQ(p.elements, 1000000);
  EXPECT_DOUBLE_EQ(p.bytes, 28e6);  // p, m, v read+written in FP32, gradient read
}

TEST(TaskKernels, ElementwiseKernelsMoveTheTasksBytes) {
  Task t = Compute(OpKind::kElementwise, DType::kFP16, "layer3/residual1");
  t.bytes = 6e6;
  KernelPlan p = PlanKernel(t);
  EXPECT_EQ(p.kind, KernelKind::kScaleAdd);
  EXPECT_EQ(p.elements, 1000000);  // 2 reads + 1 write of 2 bytes
  EXPECT_DOUBLE_EQ(p.bytes, t.bytes);
  t.name = "layer3/gelu";
  p = PlanKernel(t);
  EXPECT_EQ(p.kind, KernelKind::kGelu);
  EXPECT_DOUBLE_EQ(p.bytes, t.bytes);
  t.name = "layer3/softmax";
  p = PlanKernel(t);
  EXPECT_EQ(p.kind, KernelKind::kSoftmax);
  EXPECT_EQ(p.elements % kRowLength, 0);  // whole rows
  EXPECT_NEAR(p.bytes, t.bytes, 2 * 2 * kRowLength);
  t.name = "layer3/norm1";
  EXPECT_EQ(PlanKernel(t).kind, KernelKind::kLayerNorm);
  t.name = "grad_quantize";
  t.dtype = DType::kFP32;
  p = PlanKernel(t);
  EXPECT_EQ(p.kind, KernelKind::kQuantize);
  EXPECT_DOUBLE_EQ(p.bytes, t.bytes);  // 4 bytes read + 1 written per value
  t.name = "cast";
  t.dtype = DType::kFP8;  // 8-bit elementwise runs in FP16 with the same bytes
  p = PlanKernel(t);
  EXPECT_EQ(p.dtype, DType::kFP16);
  EXPECT_DOUBLE_EQ(p.bytes, t.bytes);
}

TEST(TaskKernels, EmptyTaskHasNoKernel) {
  EXPECT_EQ(PlanKernel(Compute(OpKind::kOther, DType::kFP32, "nothing")).kind, KernelKind::kNone);
}

TEST(TaskKernels, RejectsNonComputeTasks) {
  Task t = Compute(OpKind::kOther, DType::kFP32, "bucket0");
  t.kind = TaskKind::kCollective;
  try {
    PlanKernel(t);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "task 7 'bucket0' is a collective task, not a compute task");
  }
}

Task FusedAttention(Phase phase, DType dtype, double b, double s, double d, bool causal) {
  Task t = Compute(OpKind::kFusedAttention, dtype, "attn_core");
  t.phase = phase;
  t.causal = causal;
  t.gemm = GemmShape{s, s, d, b};
  return t;
}

std::string PlanError(const Task& t) {
  try {
    PlanKernel(t);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(TaskKernels, FusedAttentionForwardIsCudnnsFlashKernel) {
  if (!kernels::CudnnAvailable()) GTEST_SKIP() << kernels::CudnnUnavailableReason();
  for (Phase phase : {Phase::kForward, Phase::kRecompute}) {
    const KernelPlan p = PlanKernel(FusedAttention(phase, DType::kBF16, 96, 4096, 128, true));
    EXPECT_EQ(p.kind, KernelKind::kFlashForward);
    EXPECT_EQ(p.dtype, DType::kBF16);
    EXPECT_EQ(p.attention.batch, 96);
    EXPECT_EQ(p.attention.s_q, 4096);
    EXPECT_EQ(p.attention.d, 128);
    EXPECT_TRUE(p.attention.causal);
    // Causal: the scores on and below the diagonal only.
    EXPECT_DOUBLE_EQ(p.flops, 4.0 * 96 * 128 * 4096 * 4097 / 2);
    EXPECT_EQ(p.buffers[0], 96u * 4096 * 128 * 2);      // Q
    EXPECT_EQ(p.buffers[1], 2 * 96u * 4096 * 128 * 2);  // K and V
    EXPECT_EQ(p.buffers[3], 96u * 4096 * 4);            // FP32 logsumexp
  }
  // No FP32 flash kernel: BF16, and d up to the engine's multiple of 8.
  const KernelPlan p = PlanKernel(FusedAttention(Phase::kForward, DType::kFP32, 2, 100, 60, false));
  EXPECT_EQ(p.dtype, DType::kBF16);
  EXPECT_EQ(p.attention.d, 64);
  EXPECT_DOUBLE_EQ(p.flops, 4.0 * 2 * 64 * 100 * 100);
  EXPECT_EQ(ToString(p.kind), "flash_attention_fwd");
}

TEST(TaskKernels, FusedAttentionBackwardBoundsItsScoreTiles) {
  if (!kernels::CudnnAvailable()) GTEST_SKIP() << kernels::CudnnUnavailableReason();
  const KernelPlan p =
      PlanKernel(FusedAttention(Phase::kBackward, DType::kFP16, 96, 4096, 128, true));
  EXPECT_EQ(p.kind, KernelKind::kFlashBackward);
  EXPECT_EQ(ToString(p.kind), "flash_attention_bwd");
  // 2 x 4096^2 FP16 scores per entry = 64 MiB: 8 entries fill the 512 MiB bound.
  EXPECT_EQ(p.chunk, 8);
  EXPECT_LE(p.buffers[3], kBackwardScoreBytes);
  EXPECT_DOUBLE_EQ(p.flops, 10.0 * 96 * 4096 * 4096 * 128);
  EXPECT_EQ(p.buffers[0], 2 * 96u * 4096 * 128 * 2);  // Q and dO
  // A sequence whose scores alone pass the bound still runs, one entry at a time.
  EXPECT_EQ(PlanKernel(FusedAttention(Phase::kBackward, DType::kBF16, 4, 32768, 64, false)).chunk,
            1);
}

TEST(TaskKernels, FusedAttentionBadTasksAreRefusedNamingThem) {
  if (!kernels::CudnnAvailable()) {
    EXPECT_EQ(
        PlanError(FusedAttention(Phase::kForward, DType::kBF16, 1, 64, 64, true)),
        "task 7 'attn_core': no fused attention kernel: " + kernels::CudnnUnavailableReason());
    return;
  }
  Task t = FusedAttention(Phase::kForward, DType::kBF16, 1, 64, 64, true);
  t.gemm.n = 32;
  EXPECT_EQ(
      PlanError(t),
      "task 7 'attn_core': a causal fused attention needs as many queries as keys (m 64, n 32)");
  t.gemm = GemmShape{};
  EXPECT_EQ(PlanError(t),
            "task 7 'attn_core': a fused attention task needs its shape (gemm batch = sequences x "
            "heads, m = query rows, n = key rows, k = head dimension)");
}

TEST(TaskKernels, FusedAttentionWithoutCudnnNamesTheTaskAndTheReason) {
  const Task t = FusedAttention(Phase::kForward, DType::kBF16, 1, 64, 64, true);
  EXPECT_EQ(FusedAttentionUnavailable(t, "this build has no cuDNN"),
            "task 7 'attn_core': no fused attention kernel: this build has no cuDNN");
}

}  // namespace
}  // namespace stratasim::validate::cuda
