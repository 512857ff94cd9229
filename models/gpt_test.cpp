#include "models/gpt.h"

#include <gtest/gtest.h>

#include "models/test_util.h"

namespace stratasim {
namespace {

using testing::TrainingFlops;

ModelSpec Gpt(int l, int h, int a, int s, int V) {
  return testing::Transformer("gpt", l, h, a, s, V);
}

TEST(Gpt, ParameterCountMatchesPublishedFormulaAndSizes) {
  const ModelSpec gpt3 = Gpt(96, 12288, 96, 2048, 51200);
  EXPECT_NEAR(GptParameterCount(gpt3) / 1e9, 175, 1);  // "GPT-3 175B"
  const ModelSpec medium = Gpt(24, 1024, 16, 1024, 50257);
  EXPECT_NEAR(GptParameterCount(medium) / 1e6, 355, 2);  // GPT-2 medium, 355M
  // The workload's layers add up to the formula.
  const Workload w = BuildGpt(medium, 2, DType::kBF16);
  EXPECT_NEAR(w.params, GptParameterCount(medium), 1e-9 * w.params);
  EXPECT_EQ(w.layers.size(), 24u + 2u);
  EXPECT_NEAR(ModelParameterCount(medium), w.params, 1e-9 * w.params);
}

TEST(Gpt, PerOpFlopsSumToTheMegatronFormula) {
  ModelSpec m = Gpt(24, 2048, 16, 2048, 50257);
  m.attention = Attention::kUnfused;  // the published figures are of unfused attention
  const int micro_batch = 4;
  const Workload w = BuildGpt(m, micro_batch, DType::kBF16);
  const double flops = TrainingFlops(w);
  EXPECT_NEAR(flops, GptTrainingFlops(m, micro_batch), 1e-9 * flops);
  // 72 B s l h^2 (1 + s/6h + V/12lh), computed by hand for these numbers.
  const double by_hand = 72.0 * 4 * 2048 * 24 * 2048.0 * 2048 *
                         (1 + 2048.0 / (6 * 2048) + 50257.0 / (12.0 * 24 * 2048));
  EXPECT_NEAR(GptTrainingFlops(m, micro_batch), by_hand, 1e-9 * by_hand);
  // Backward is twice forward, split evenly between input and weight gradients for the
  // linear layers.
  EXPECT_NEAR(w.BackwardFlops(), 2 * w.ForwardFlops(), 1e-9 * flops);
}

TEST(Gpt, LayersAreBrokenIntoTheirKernels) {
  ModelSpec m = Gpt(2, 256, 4, 128, 1000);
  m.attention = Attention::kUnfused;  // flash: models/attention_test.cpp
  const Workload w = BuildGpt(m, 2, DType::kBF16);
  std::vector<std::string> names;
  for (const OpCost& op : w.layers[1].ops) names.push_back(op.name);
  EXPECT_EQ(names, (std::vector<std::string>{"norm1", "qkv", "attn_scores", "softmax",
                                             "attn_dropout", "attn_values", "proj", "residual1",
                                             "norm2", "mlp_up", "gelu", "mlp_down", "residual2"}));
  const OpCost& qkv = w.layers[1].ops[1];
  EXPECT_EQ(qkv.forward.gemm.m, 256);          // b s
  EXPECT_EQ(qkv.forward.gemm.n, 768);          // 3h
  EXPECT_EQ(qkv.forward.gemm.k, 256);          // h
  EXPECT_EQ(qkv.backward_weight.gemm.m, 256);  // dW[h, 3h] = X^T dY: k = b s
  EXPECT_EQ(qkv.backward_weight.gemm.n, 768);
  const OpCost& scores = w.layers[1].ops[2];
  EXPECT_EQ(scores.forward.gemm.batch, 2 * 4);  // b a
  EXPECT_EQ(scores.forward.gemm.k, 64);         // head size
}

TEST(Gpt, ActivationMemoryFollowsKorthikanti) {
  ModelSpec m = Gpt(2, 1024, 16, 1024, 1000);
  m.attention = Attention::kUnfused;  // the published figures are of unfused attention
  const Workload w = BuildWorkload(m, 2, DType::kFP16);
  const double s = 1024, b = 2, h = 1024, a = 16;
  EXPECT_DOUBLE_EQ(w.layers[1].activation_bytes, s * b * h * (34 + 5 * a * s / h));
}

TEST(Gpt, RejectsHeadsThatDoNotDivideHidden) {
  ModelSpec m = Gpt(2, 1000, 7, 128, 100);
  m.where = SourceLocation{"m.yaml", 3, 1};
  try {
    BuildGpt(m, 1, DType::kBF16);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "model.heads");
    EXPECT_EQ(e.rule(), "must divide hidden");
    EXPECT_EQ(e.where().line, 3);
  }
}

TEST(Workload, UnknownKindListsTheKnownOnes) {
  ModelSpec m = Gpt(2, 64, 4, 16, 100);
  m.kind = "rnn";
  try {
    BuildWorkload(m, 1, DType::kBF16);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "model.kind");
    EXPECT_EQ(e.rule(),
              "unknown model kind (known: gpt, bert, llama, moe, resnet50, vgg16, graphsage)");
  }
}

}  // namespace
}  // namespace stratasim
