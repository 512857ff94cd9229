#include "models/ops.h"

#include <gtest/gtest.h>

namespace stratasim {
namespace {

TEST(Ops, LinearSplitsBackwardIntoInputAndWeightGradients) {
  const OpCost op = Linear("fc", 64, 128, 256, 2);
  EXPECT_DOUBLE_EQ(op.forward.flops, 2.0 * 64 * 128 * 256);
  EXPECT_DOUBLE_EQ(op.backward_input.flops, op.forward.flops);
  EXPECT_DOUBLE_EQ(op.backward_weight.flops, op.forward.flops);
  // dX[64, 128] = dY[64, 256] W^T; dW[128, 256] = X^T[128, 64] dY.
  EXPECT_EQ(op.backward_input.gemm.m, 64);
  EXPECT_EQ(op.backward_input.gemm.n, 128);
  EXPECT_EQ(op.backward_input.gemm.k, 256);
  EXPECT_EQ(op.backward_weight.gemm.m, 128);
  EXPECT_EQ(op.backward_weight.gemm.k, 64);
  EXPECT_DOUBLE_EQ(op.forward.bytes, 2.0 * (64 * 128 + 128 * 256 + 64 * 256));
  EXPECT_DOUBLE_EQ(op.saved_bytes, 2.0 * 64 * 128);
}

TEST(Ops, QuantizeIsAMemoryBoundCopyBetweenFormats) {
  const OpCost q = QuantizeOp("to_fp8", 1e6, DType::kBF16, DType::kFP8);
  EXPECT_EQ(q.kind, OpKind::kElementwise);
  EXPECT_DOUBLE_EQ(q.forward.flops, 0);
  EXPECT_DOUBLE_EQ(q.forward.bytes, 3e6);  // 2 bytes in, 1 out per value
  EXPECT_TRUE(q.backward_input.empty());
  EXPECT_DOUBLE_EQ(QuantizeOp("back", 1e6, DType::kINT8, DType::kFP32).forward.bytes, 5e6);
}

TEST(Ops, DropoutKeepsAOneByteMask) {
  const OpCost d = Dropout("drop", 1000, 2);
  EXPECT_DOUBLE_EQ(d.saved_bytes, 1000);
  EXPECT_DOUBLE_EQ(d.forward.bytes, 1000 * (2 + 2 + 1));
}

}  // namespace
}  // namespace stratasim
