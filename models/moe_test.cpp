#include "models/moe.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "core/model_presets.h"
#include "models/test_util.h"
#include "models/transformer.h"

namespace stratasim {
namespace {

ModelSpec Moe(int experts, int top_k, double capacity_factor) {
  ModelSpec m = testing::Transformer("moe", 4, 512, 8, 256, 1000);
  m.experts = experts;
  m.top_k = top_k;
  m.capacity_factor = capacity_factor;
  return m;
}

TEST(Moe, ParametersAndExpertFlopsFollowCapacity) {
  const ModelSpec m = Moe(8, 2, 1.25);
  const Workload w = BuildMoe(m, 4, DType::kBF16);
  EXPECT_DOUBLE_EQ(w.params, MoeParameterCount(m));
  // capacity = ceil(1.25 * 2 * 1024 / 8) = 320 tokens per expert.
  TransformerLayerShape x;
  x.micro_batch = 4;
  x.sequence = 256;
  x.experts = 8;
  x.top_k = 2;
  x.capacity_factor = 1.25;
  EXPECT_EQ(ExpertCapacity(x), 320);
  double expert_flops = 0;
  for (const OpCost& op : w.layers[1].ops) {
    if (op.name == "expert_up" || op.name == "expert_down") {
      expert_flops += op.forward.flops;
      EXPECT_EQ(op.forward.gemm.batch, 8);
      EXPECT_EQ(op.forward.gemm.m, 320);
    }
  }
  EXPECT_DOUBLE_EQ(expert_flops, 2 * 2.0 * 8 * 320 * 512 * 2048);  // two GEMMs, E C h 4h each
}

TEST(Moe, BadRoutingFieldsAreErrors) {
  EXPECT_THROW(BuildMoe(Moe(4, 5, 1), 1, DType::kBF16), ConfigError);
  EXPECT_THROW(BuildMoe(Moe(0, 1, 1), 1, DType::kBF16), ConfigError);
  EXPECT_THROW(BuildMoe(Moe(4, 1, 0), 1, DType::kBF16), ConfigError);
}

TEST(Moe, AllToAllVolumesFollowTheRoutingMatrix) {
  // 2 ranks, 2 experts each (experts 0,1 on rank 0; 2,3 on rank 1); 1 KiB per token.
  const std::vector<std::vector<double>> tokens = {{10, 0, 5, 1}, {2, 3, 0, 7}};
  const MoeAllToAll v = MoeAllToAllVolumes(tokens, 2, 512, DType::kBF16);
  const double t = 1024;
  EXPECT_EQ(v.dispatch_bytes, (std::vector<double>{10 * t, 6 * t, 5 * t, 7 * t}));
  EXPECT_EQ(v.combine_bytes, (std::vector<double>{10 * t, 5 * t, 6 * t, 7 * t}));  // transposed
  EXPECT_EQ(v.dropped_tokens, 0);
  // Capacity 6 per expert: expert 0 takes 6 of rank 0's 10 and none of rank 1's 2 (6 dropped);
  // expert 3 takes rank 0's 1 and 5 of rank 1's 7 (2 dropped).
  const MoeAllToAll capped = MoeAllToAllVolumes(tokens, 2, 512, DType::kBF16, 6);
  EXPECT_EQ(capped.dropped_tokens, 8);
  EXPECT_EQ(capped.dispatch_bytes[0], 6 * t);
  EXPECT_EQ(capped.dispatch_bytes[1 * 2 + 1], 5 * t);
  EXPECT_THROW(MoeAllToAllVolumes({{1, 2, 3}}, 2, 512, DType::kBF16), Error);
}

}  // namespace
}  // namespace stratasim

namespace stratasim {
namespace {

TEST(Mixtral, PresetHasTheReleasedParameterCount) {
  // Jiang et al. 2024: 46.7 B parameters, 12.9 B active per token. The released checkpoint
  // holds 46,702,792,704: embeddings and the untied output layer (32,000 x 4,096 each), per
  // layer q/o (4,096^2), k/v (4,096 x 1,024), the router (4,096 x 8), 8 SwiGLU experts of
  // 3 x 4,096 x 14,336 and two RMSNorms; and the final RMSNorm.
  const ModelSpec* m = FindModelPreset("mixtral-8x7b");
  ASSERT_NE(m, nullptr);
  EXPECT_DOUBLE_EQ(MoeParameterCount(*m), 46702792704);
  ModelSpec small = *m;
  small.sequence = 128;  // the count does not depend on it; the build is then quick
  const Workload w = BuildWorkload(small, 1, DType::kBF16);
  EXPECT_DOUBLE_EQ(w.params, 46702792704);
  // Active: all but 6 of the 8 experts of every layer.
  const double expert = 3.0 * 4096 * 14336;
  EXPECT_DOUBLE_EQ(w.params - 32 * 6 * expert, 12879925248);
  // Capacity factor 1 with top-2: the experts compute exactly 2 x tokens slots, so the
  // forward FLOPs of one layer's experts are 2 x tokens x 2 FLOPs x 3 h f.
  double expert_flops = 0;
  for (const OpCost& op : w.layers[1].ops) {
    if (op.name == "expert_gate_up" || op.name == "expert_down") expert_flops += op.forward.flops;
  }
  EXPECT_DOUBLE_EQ(expert_flops, 2 * 128 * 2 * expert);
}

TEST(Mixtral, LlamaStyleMoeLayers) {
  ModelSpec m = *FindModelPreset("mixtral-8x7b");
  m.layers = 1;
  m.sequence = 64;
  const Workload w = BuildWorkload(m, 1, DType::kBF16);
  std::vector<std::string> names;
  for (const OpCost& op : w.layers[1].ops) names.push_back(op.name);
  const std::vector<std::string> want = {
      "norm1",       "qkv",     "rotary",      "attention", "proj",           "residual1",
      "norm2",       "router",  "router_topk", "dispatch",  "expert_gate_up", "expert_swiglu",
      "expert_down", "combine", "residual2"};  // flash attention: the core is one kernel
  EXPECT_EQ(names, want);
  // K and V are 8 heads of 128 (GQA): QKV is 4,096 x (4,096 + 2 x 1,024).
  for (const OpCost& op : w.layers[1].ops) {
    if (op.name == "qkv") {
      EXPECT_DOUBLE_EQ(op.forward.gemm.n, 6144);
    }
  }
  // Untied output layer: the head owns 32,000 x 4,096 weights and the final RMSNorm.
  EXPECT_DOUBLE_EQ(w.layers.back().params, 32000.0 * 4096 + 4096);
}

}  // namespace
}  // namespace stratasim
