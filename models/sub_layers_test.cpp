#include "models/sub_layers.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/model_presets.h"
#include "models/recompute.h"
#include "models/test_util.h"

namespace stratasim {
namespace {

using testing::TrainingFlops;

void ExpectSameTotals(const Workload& whole, const Workload& split, const std::string& what) {
  EXPECT_NEAR(TrainingFlops(split), TrainingFlops(whole), 1e-12 * TrainingFlops(whole)) << what;
  EXPECT_NEAR(split.params, whole.params, 1e-12 * whole.params) << what;
  EXPECT_NEAR(split.ActivationBytes(), whole.ActivationBytes(), 1e-12 * whole.ActivationBytes())
      << what;
  double bytes_whole = 0, bytes_split = 0;
  for (const LayerCost& L : whole.layers) {
    for (const OpCost& op : L.ops) bytes_whole += op.forward.bytes + op.backward_input.bytes;
  }
  for (const LayerCost& L : split.layers) {
    for (const OpCost& op : L.ops) bytes_split += op.forward.bytes + op.backward_input.bytes;
  }
  EXPECT_NEAR(bytes_split, bytes_whole, 1e-12 * bytes_whole) << what;
}

ModelSpec Small(const char* kind) {
  ModelSpec m = testing::Transformer(kind, 3, 512, 8, 256, 1000);
  if (std::string(kind) == "moe") {
    m.experts = 8;
    m.top_k = 2;
    m.capacity_factor = 1.25;
  }
  return m;
}

TEST(SubLayers, TotalsEqualTheUnsplitWorkload) {
  for (const char* kind : {"gpt", "bert", "llama", "moe"}) {
    const Workload whole = BuildWorkload(Small(kind), 2, DType::kBF16);
    const Workload split = SplitSubLayers(whole);
    ExpectSameTotals(whole, split, kind);
    // Every transformer layer became two recomputable halves taking the hidden activation.
    int halves = 0;
    for (const LayerCost& L : split.layers) {
      const bool half =
          L.name.find(".attn") != std::string::npos || L.name.find(".mlp") != std::string::npos;
      if (!half) continue;
      ++halves;
      EXPECT_TRUE(L.recomputable) << L.name;
      EXPECT_DOUBLE_EQ(L.input_bytes, 2.0 * 256 * 512 * 2) << L.name;
      EXPECT_GT(L.params, 0) << L.name;
    }
    EXPECT_EQ(halves, 6) << kind;
    EXPECT_EQ(split.layers.size(), whole.layers.size() + 3) << kind;
    EXPECT_EQ(split.layers[1].name, "layer0.attn") << kind;
    EXPECT_EQ(split.layers[2].name, "layer0.mlp") << kind;
    // Splitting again changes nothing.
    EXPECT_EQ(SplitSubLayers(split).layers.size(), split.layers.size()) << kind;
  }
}

TEST(SubLayers, HalvesFollowTheLayerStructure) {
  // GPT (pre-norm): norm1 ... residual1 | norm2 ... residual2; the linear weights split exactly.
  const ModelSpec gpt = Small("gpt");
  const Workload g = SplitSubLayers(BuildWorkload(gpt, 1, DType::kBF16));
  const LayerCost& attn = g.layers[1];
  const LayerCost& mlp = g.layers[2];
  EXPECT_EQ(attn.ops.front().name, "norm1");
  EXPECT_EQ(attn.ops.back().name, "residual1");
  EXPECT_EQ(mlp.ops.front().name, "norm2");
  EXPECT_EQ(mlp.ops.back().name, "residual2");
  const double h = 512, f = 4 * h;
  const double layer = BuildWorkload(gpt, 1, DType::kBF16).layers[1].params;
  EXPECT_NEAR(attn.params, layer * 4 * h * h / (4 * h * h + 2 * h * f), 1e-9 * layer);
  // BERT (post-norm): the attention half ends with norm1.
  const Workload b = SplitSubLayers(BuildWorkload(Small("bert"), 1, DType::kBF16));
  EXPECT_EQ(b.layers[1].ops.back().name, "norm1");
  EXPECT_EQ(b.layers[2].ops.front().name, "mlp_up");
  EXPECT_EQ(b.layers[2].ops.back().name, "norm2");
  // MoE: the router and experts are in the MLP half, which holds the experts' weights.
  const Workload m = SplitSubLayers(BuildWorkload(Small("moe"), 1, DType::kBF16));
  bool router = false;
  for (const OpCost& op : m.layers[2].ops) router = router || op.name == "router";
  EXPECT_TRUE(router);
  EXPECT_GT(m.layers[2].params, 8 * m.layers[1].params);
}

TEST(SubLayers, OtherLayersAndRecomputationAfterTheSplit) {
  const Workload whole = BuildWorkload(Small("gpt"), 2, DType::kBF16);
  Workload split = SplitSubLayers(whole);
  EXPECT_EQ(split.layers.front().name, whole.layers.front().name);
  EXPECT_EQ(split.layers.back().name, whole.layers.back().name);
  EXPECT_EQ(split.recompute, Recompute::kNone);
  // Full recomputation of the halves keeps each half's input: two per layer.
  ApplyRecompute(split, Recompute::kFull);
  EXPECT_DOUBLE_EQ(split.layers[1].activation_bytes, split.layers[1].input_bytes);
  EXPECT_DOUBLE_EQ(split.layers[2].activation_bytes, split.layers[2].input_bytes);
  // A CNN has no transformer layers: unchanged.
  const Workload c = BuildWorkload(*FindModelPreset("resnet50"), 2, DType::kBF16);
  EXPECT_EQ(SplitSubLayers(c).layers.size(), c.layers.size());
}

TEST(SubLayers, ALayerWithoutResidual1IsAnError) {
  Workload w = BuildWorkload(Small("gpt"), 1, DType::kBF16);
  for (OpCost& op : w.layers[2].ops) {
    if (op.name == "residual1") op.name = "residual_a";
  }
  try {
    SplitSubLayers(w);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "SplitSubLayers: layer layer1 has ops qkv and residual2 but no residual1 between "
                 "them, so its attention and MLP halves are unknown");
  }
}

}  // namespace
}  // namespace stratasim
