#include "models/sub_layers.h"

#include <gtest/gtest.h>

#include "models/recompute.h"
#include "models/test_util.h"

namespace stratasim {
namespace {

void ExpectSameTotals(const Workload& w, const Workload& split) {
  EXPECT_NEAR(split.ForwardFlops(), w.ForwardFlops(), 1e-9 * w.ForwardFlops());
  EXPECT_NEAR(split.BackwardFlops(), w.BackwardFlops(), 1e-9 * w.BackwardFlops());
  EXPECT_NEAR(split.params, w.params, 1e-9 * w.params);
  EXPECT_NEAR(split.ActivationBytes(), w.ActivationBytes(), 1e-9 * w.ActivationBytes());
}

TEST(SubLayers, SplitsEachTransformerLayerIntoAttentionAndMlpKeepingTotals) {
  for (const char* kind : {"gpt", "bert", "llama"}) {
    SCOPED_TRACE(kind);
    const Workload w =
        BuildWorkload(testing::Transformer(kind, 4, 1024, 16, 512, 32000), 2, DType::kBF16);
    const Workload split = SplitSubLayers(w);
    ASSERT_EQ(split.layers.size(), w.layers.size() + 4);
    ExpectSameTotals(w, split);
    int halves = 0;
    for (const LayerCost& L : split.layers) {
      const std::string& n = L.name;
      if (n.size() > 5 && (n.substr(n.size() - 5) == ".attn" || n.substr(n.size() - 4) == ".mlp")) {
        ++halves;
        EXPECT_TRUE(L.recomputable) << n;
        EXPECT_GT(L.input_bytes, 0) << n;
      }
    }
    EXPECT_EQ(halves, 8);
  }
}

TEST(SubLayers, ParametersSplitAsTheWeightsDo) {
  // GPT, h = 1024, ffn 4h: attention holds 4 h^2 weights, the MLP 8 h^2.
  const Workload split = SplitSubLayers(
      BuildWorkload(testing::Transformer("gpt", 1, 1024, 16, 512, 32000), 1, DType::kBF16));
  double attn = 0, mlp = 0;
  for (const LayerCost& L : split.layers) {
    if (L.name.find(".attn") != std::string::npos) attn = L.params;
    if (L.name.find(".mlp") != std::string::npos) mlp = L.params;
  }
  EXPECT_NEAR(mlp / attn, 2.0, 0.01);
}

TEST(SubLayers, RecomputingOneHalfKeepsOnlyItsInput) {
  Workload split = SplitSubLayers(
      BuildWorkload(testing::Transformer("gpt", 1, 1024, 16, 512, 32000), 1, DType::kBF16));
  std::vector<bool> which(split.layers.size(), false);
  size_t mlp = 0;
  for (size_t i = 0; i < split.layers.size(); ++i) {
    if (split.layers[i].name.find(".mlp") != std::string::npos) mlp = i;
  }
  which[mlp] = true;
  which[0] = true;  // the embedding is not recomputable: ignored
  const double before = split.layers[0].activation_bytes;
  ApplyRecompute(split, Recompute::kFull, which);
  EXPECT_DOUBLE_EQ(split.layers[mlp].activation_bytes, split.layers[mlp].input_bytes);
  EXPECT_GT(split.layers[mlp].recomputed_bytes, 0);
  EXPECT_DOUBLE_EQ(split.layers[0].activation_bytes, before);
  EXPECT_DOUBLE_EQ(split.layers[mlp - 1].recomputed_bytes, 0);
}

}  // namespace
}  // namespace stratasim
