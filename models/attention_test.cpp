#include "models/attention.h"

#include <gtest/gtest.h>

#include "models/gpt.h"
#include "models/recompute.h"
#include "models/test_util.h"

namespace stratasim {
namespace {

AttentionShape Shape(bool causal) {
  AttentionShape x;
  x.micro_batch = 2;
  x.sequence = 512;
  x.heads = 8;
  x.kv_heads = 8;
  x.head_dim = 64;
  x.bytes_per_element = 2;
  x.causal = causal;
  return x;
}

TEST(FlashAttention, FlopsAreTheTwoProductsForwardAndFiveBackward) {
  const double b = 2, s = 512, h = 8 * 64;
  const OpCost full = FlashAttention(Shape(/*causal=*/false));
  EXPECT_EQ(full.kind, OpKind::kFusedAttention);
  EXPECT_EQ(full.name, "attention");
  EXPECT_TRUE(full.attention_core);
  EXPECT_DOUBLE_EQ(full.forward.flops, 4 * b * s * s * h);  // Q K^T and P V
  // Dao 2023 §3.1: the scores again, dV, dP, dQ and dK: 2.5x the forward.
  EXPECT_DOUBLE_EQ(full.backward_input.flops, 10 * b * s * s * h);
  EXPECT_TRUE(full.backward_weight.empty());
  EXPECT_FALSE(full.forward.causal);

  // A causal kernel skips the masked half of the score tiles in both passes.
  const OpCost causal = FlashAttention(Shape(/*causal=*/true));
  EXPECT_DOUBLE_EQ(causal.forward.flops, 2 * b * s * s * h);
  EXPECT_DOUBLE_EQ(causal.backward_input.flops, 5 * b * s * s * h);
  EXPECT_TRUE(causal.forward.causal);
  EXPECT_TRUE(causal.backward_input.causal);

  // The shape the executors run it by: batch = sequences x heads, m = queries, n = keys, k = d.
  for (const KernelCost* c : {&causal.forward, &causal.backward_input}) {
    EXPECT_EQ(c->gemm.batch, 2 * 8);
    EXPECT_EQ(c->gemm.m, 512);
    EXPECT_EQ(c->gemm.n, 512);
    EXPECT_EQ(c->gemm.k, 64);
  }
}

TEST(FlashAttention, TrafficIsLinearInTheSequenceAndOnlyTheLogsumexpIsSaved) {
  const double b = 2, s = 512, a = 8, h = 8 * 64, e = 2;
  const double tensor = b * s * h * e;  // Q, K, V, O, dO, dQ, dK or dV
  const double lse = b * a * s * 4;     // FP32 logsumexp
  const OpCost op = FlashAttention(Shape(true));
  EXPECT_DOUBLE_EQ(op.forward.bytes, 3 * tensor + tensor + lse);  // Q, K, V in; O out
  // Q, K, V, O, dO and the logsumexp in; dQ, dK, dV out.
  EXPECT_DOUBLE_EQ(op.backward_input.bytes, 5 * tensor + lse + 3 * tensor);
  EXPECT_DOUBLE_EQ(op.saved_bytes, lse);

  // Grouped-query attention: K and V (and dK, dV) have kv_heads heads; the FLOPs do not change.
  AttentionShape gqa = Shape(true);
  gqa.kv_heads = 2;
  const OpCost g = FlashAttention(gqa);
  const double kv = b * s * 2 * 64 * e;  // K or V
  EXPECT_DOUBLE_EQ(g.forward.bytes, 2 * tensor + 2 * kv + lse);
  EXPECT_DOUBLE_EQ(g.backward_input.bytes, 3 * tensor + 2 * kv + lse + tensor + 2 * kv);
  EXPECT_DOUBLE_EQ(g.forward.flops, op.forward.flops);
}

TEST(FlashAttention, DropoutIsFusedAndAddsNothing) {
  AttentionShape no_dropout = Shape(true);
  no_dropout.dropout = false;
  const OpCost with = FlashAttention(Shape(true)), without = FlashAttention(no_dropout);
  EXPECT_DOUBLE_EQ(with.forward.bytes, without.forward.bytes);
  EXPECT_DOUBLE_EQ(with.saved_bytes, without.saved_bytes);
}

ModelSpec Gpt(Attention attention) {
  ModelSpec m = testing::Transformer("gpt", 2, 1024, 16, 1024, 1000);
  m.attention = attention;
  return m;
}

TEST(FlashAttention, RemovesTheS2ActivationBytesOfAGptLayerExactly) {
  const double s = 1024, b = 2, h = 1024, a = 16;
  const Workload unfused = BuildWorkload(Gpt(Attention::kUnfused), 2, DType::kBF16);
  const Workload flash = BuildWorkload(Gpt(Attention::kFlash), 2, DType::kBF16);
  // Korthikanti et al. 2022: s b h (34 + 5 a s / h) with BF16 values and dropout.
  EXPECT_DOUBLE_EQ(unfused.layers[1].activation_bytes, s * b * h * (34 + 5 * a * s / h));
  // Flash keeps the 34 s b h and the FP32 logsumexp, 4 a s b bytes, and no s^2 term.
  EXPECT_DOUBLE_EQ(flash.layers[1].activation_bytes, 34 * s * b * h + 4 * a * s * b);
  EXPECT_DOUBLE_EQ(unfused.layers[1].activation_bytes - flash.layers[1].activation_bytes,
                   5 * a * s * s * b - 4 * a * s * b);
  // The rest of the layer is the same kernels.
  std::vector<std::string> names;
  for (const OpCost& op : flash.layers[1].ops) names.push_back(op.name);
  EXPECT_EQ(names, (std::vector<std::string>{"norm1", "qkv", "attention", "proj", "residual1",
                                             "norm2", "mlp_up", "gelu", "mlp_down", "residual2"}));
}

TEST(FlashAttention, LayerFlopsReplaceTheUnfusedProductsByTheKernels) {
  const double s = 1024, b = 2, h = 1024, l = 2;
  ModelSpec m = Gpt(Attention::kFlash);
  const Workload flash = BuildWorkload(m, 2, DType::kBF16);
  const Workload unfused = BuildWorkload(Gpt(Attention::kUnfused), 2, DType::kBF16);
  // Unfused: 4 b s^2 h forward and 8 b s^2 h backward per layer (the Megatron formula's
  // s/(6h) term); causal flash: 2 b s^2 h and 5 b s^2 h.
  EXPECT_NEAR(unfused.ForwardFlops() - flash.ForwardFlops(), l * 2 * b * s * s * h, 1);
  EXPECT_NEAR(unfused.BackwardFlops() - flash.BackwardFlops(), l * 3 * b * s * s * h, 1);
  m.causal = false;
  const Workload full = BuildWorkload(m, 2, DType::kBF16);
  EXPECT_NEAR(full.ForwardFlops(), unfused.ForwardFlops(), 1);
  EXPECT_NEAR(full.BackwardFlops() - unfused.BackwardFlops(), l * 2 * b * s * s * h, 1);
}

TEST(FlashAttention, SelectiveRecomputationIsMoot) {
  const double s = 1024, b = 2, h = 1024, a = 16;
  ModelSpec m = Gpt(Attention::kFlash);
  m.recompute = Recompute::kSelective;
  const Workload w = BuildWorkload(m, 2, DType::kBF16);
  // It drops only the logsumexp and still re-runs the kernel's forward.
  EXPECT_DOUBLE_EQ(w.layers[1].activation_bytes, 34 * s * b * h);
  EXPECT_DOUBLE_EQ(w.layers[1].recomputed_bytes, 4 * a * s * b);
  EXPECT_DOUBLE_EQ(w.layers[1].RecomputeFlops(), 2 * b * s * s * h);  // causal
}

TEST(FlashAttention, BertIsNotCausalUnlessToldSo) {
  ModelSpec bert = testing::Transformer("bert", 2, 256, 4, 128, 1000);
  auto core = [](const Workload& w) {
    for (const OpCost& op : w.layers[1].ops) {
      if (op.kind == OpKind::kFusedAttention) return op;
    }
    ADD_FAILURE() << "no fused attention";
    return OpCost{};
  };
  EXPECT_FALSE(core(BuildWorkload(bert, 2, DType::kBF16)).forward.causal);
  bert.causal = true;
  EXPECT_TRUE(core(BuildWorkload(bert, 2, DType::kBF16)).forward.causal);
  const ModelSpec gpt = testing::Transformer("gpt", 2, 256, 4, 128, 1000);
  EXPECT_TRUE(core(BuildWorkload(gpt, 2, DType::kBF16)).forward.causal);
}

}  // namespace
}  // namespace stratasim
