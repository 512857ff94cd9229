#include "models/gpt.h"

#include <gtest/gtest.h>

namespace stratasim {
namespace {

ModelSpec Gpt(int l, int h, int a, int s, int V) {
  ModelSpec m;
  m.layers = l;
  m.hidden = h;
  m.heads = a;
  m.sequence = s;
  m.vocabulary = V;
  return m;
}

TEST(Gpt, ParameterCountMatchesPublishedFormulaAndSizes) {
  const ModelSpec gpt3 = Gpt(96, 12288, 96, 2048, 51200);
  EXPECT_NEAR(GptParameterCount(gpt3) / 1e9, 175, 1);  // "GPT-3 175B"
  const ModelSpec medium = Gpt(24, 1024, 16, 1024, 50257);
  EXPECT_NEAR(GptParameterCount(medium) / 1e6, 355, 2);  // GPT-2 medium, 355M
  // The workload's layers add up to the formula.
  const GptWorkload w = BuildGpt(medium, 2, DType::kBF16);
  EXPECT_NEAR(w.params, GptParameterCount(medium), 1e-9 * w.params);
  EXPECT_EQ(w.layers.size(), 24u + 2u);
}

TEST(Gpt, PerOpFlopsSumToTheMegatronFormula) {
  const ModelSpec m = Gpt(24, 2048, 16, 2048, 50257);
  const int micro_batch = 4;
  const GptWorkload w = BuildGpt(m, micro_batch, DType::kBF16);
  double flops = 0;
  for (const LayerCost& L : w.layers) {
    for (const OpCost& op : L.ops) flops += op.forward_flops + op.backward_flops;
  }
  EXPECT_NEAR(flops, GptTrainingFlops(m, micro_batch), 1e-9 * flops);
  // 72 B s l h^2 (1 + s/6h + V/12lh), computed by hand for these numbers.
  const double by_hand = 72.0 * 4 * 2048 * 24 * 2048.0 * 2048 *
                         (1 + 2048.0 / (6 * 2048) + 50257.0 / (12.0 * 24 * 2048));
  EXPECT_NEAR(GptTrainingFlops(m, micro_batch), by_hand, 1e-9 * by_hand);
}

TEST(Gpt, ActivationMemoryFollowsKorthikanti) {
  const ModelSpec m = Gpt(2, 1024, 16, 1024, 1000);
  const GptWorkload w = BuildGpt(m, 2, DType::kFP16);
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

}  // namespace
}  // namespace stratasim
