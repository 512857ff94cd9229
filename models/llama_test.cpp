#include "models/llama.h"

#include <gtest/gtest.h>

#include "core/model_presets.h"
#include "models/test_util.h"

namespace stratasim {
namespace {

TEST(Llama, PresetsHaveTheReleasedParameterCounts) {
  // Parameter counts of the released checkpoints (Touvron et al. 2023 round them to 7B, 13B,
  // 70B; Dubey et al. 2024 to 8B, 70B, 405B): embeddings and the untied output layer of 128,256
  // tokens, per layer q/o (h x h), k/v (h x 1024: 8 heads of 128), SwiGLU (3 x h x ffn), two
  // RMSNorms; and the final RMSNorm.
  EXPECT_DOUBLE_EQ(LlamaParameterCount(*FindModelPreset("llama2-7b")), 6738415616);
  EXPECT_DOUBLE_EQ(LlamaParameterCount(*FindModelPreset("llama2-13b")), 13015864320);
  EXPECT_DOUBLE_EQ(LlamaParameterCount(*FindModelPreset("llama2-70b")), 68976648192);
  EXPECT_DOUBLE_EQ(LlamaParameterCount(*FindModelPreset("llama3-8b")), 8030261248);
  EXPECT_DOUBLE_EQ(LlamaParameterCount(*FindModelPreset("llama3-70b")), 70553706496);
  EXPECT_DOUBLE_EQ(LlamaParameterCount(*FindModelPreset("llama3-405b")), 405853388800);
  const ModelSpec m = *FindModelPreset("llama3-8b");
  EXPECT_DOUBLE_EQ(BuildLlama(m, 1, DType::kBF16).params, LlamaParameterCount(m));
}

TEST(Llama, SwiGluWidthFollowsTheReferenceRule) {
  ModelSpec m = testing::Transformer("llama", 2, 4096, 32, 128, 1000);
  EXPECT_EQ(LlamaFfnHidden(m), 11008);  // LLaMA-7B
  m.hidden = 5120;
  m.heads = 40;
  EXPECT_EQ(LlamaFfnHidden(m), 13824);  // LLaMA-13B
}

TEST(Llama, GroupedQueryAttentionShrinksKeysAndValues) {
  ModelSpec m = *FindModelPreset("llama2-70b");
  m.attention = Attention::kUnfused;  // the published figures are of unfused attention
  const double b = 1, s = 4096, h = 8192, kv = 8 * 128, f = 28672, V = 32000, l = 80;
  const Workload w = BuildLlama(m, 1, DType::kBF16);
  const OpCost& qkv = w.layers[1].ops[1];
  EXPECT_EQ(qkv.name, "qkv");
  EXPECT_EQ(qkv.forward.gemm.n, h + 2 * kv);
  // Per layer forward: QKV, attention (as multi-head), output projection, SwiGLU; then logits.
  const double T = b * s;
  const double layer = 2 * T * h * (h + 2 * kv) + 4 * b * s * s * h + 2 * T * h * h + 6 * T * h * f;
  const double closed = 3 * (l * layer + 2 * T * h * V);
  const double flops = testing::TrainingFlops(w);
  EXPECT_NEAR(flops, closed, 1e-9 * flops);
  // No dropout anywhere, rotary on Q and K.
  for (const OpCost& op : w.layers[1].ops) EXPECT_EQ(op.name.find("dropout"), std::string::npos);
  EXPECT_EQ(w.layers[1].ops[2].name, "rotary");
}

TEST(Llama, KvHeadsMustDivideHeads) {
  ModelSpec m = testing::Transformer("llama", 2, 256, 8, 64, 100);
  m.kv_heads = 3;
  try {
    BuildLlama(m, 1, DType::kBF16);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "model.kv_heads");
    EXPECT_EQ(e.rule(), "must divide heads");
  }
}

}  // namespace
}  // namespace stratasim
