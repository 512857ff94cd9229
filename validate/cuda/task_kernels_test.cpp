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

}  // namespace
}  // namespace stratasim::validate::cuda
