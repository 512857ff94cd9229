#include "models/recompute.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "models/gpt.h"
#include "models/memory.h"
#include "models/test_util.h"

namespace stratasim {
namespace {

using testing::TrainingFlops;

ModelSpec Gpt(Recompute r) {
  ModelSpec m = testing::Transformer("gpt", 24, 2048, 16, 2048, 50257);
  m.recompute = r;
  m.attention = Attention::kUnfused;  // the published figures are of unfused attention
  return m;
}

double AllFlops(const Workload& w) { return TrainingFlops(w) + w.RecomputeFlops(); }

TEST(Recompute, FullRecomputationMatchesMegatronEquation3) {
  const ModelSpec m = Gpt(Recompute::kFull);
  const int b = 4;
  const Workload w = BuildWorkload(m, b, DType::kBF16);
  const double flops = AllFlops(w);
  // 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) (Narayanan et al. 2021, eq. 3).
  EXPECT_NEAR(flops, GptTrainingFlops(m, b, Recompute::kFull), 1e-9 * flops);
  const double s = 2048, l = 24, h = 2048, V = 50257;
  const double with_16 = 96.0 * b * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  const double with_12 = 96.0 * b * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(flops, with_16, 1e-9 * flops);
  // Writing V/(12 l h) inside the 96 form would count the logits 4 times, as if the head were
  // recomputed too; it is not (Megatron recomputes transformer layers only).
  EXPECT_NEAR(with_12 - flops, 2.0 * b * s * h * V, 1e-6 * flops);
  // Model FLOPs (what MFU counts) are unchanged by recomputation.
  EXPECT_NEAR(TrainingFlops(w), GptTrainingFlops(m, b), 1e-9 * flops);
}

TEST(Recompute, SelectiveReRunsOnlyTheAttentionCore) {
  const ModelSpec m = Gpt(Recompute::kSelective);
  const int b = 2;
  const Workload w = BuildWorkload(m, b, DType::kBF16);
  const double s = 2048, l = 24, h = 2048;
  EXPECT_NEAR(w.RecomputeFlops(), 4.0 * b * s * s * h * l, 1e-9 * w.RecomputeFlops());
  EXPECT_NEAR(AllFlops(w), GptTrainingFlops(m, b, Recompute::kSelective), 1e-9 * AllFlops(w));
  for (const OpCost& op : w.layers[1].ops) EXPECT_EQ(op.recomputed, op.attention_core) << op.name;
  EXPECT_FALSE(w.layers.front().ops[0].recomputed);  // embedding
  EXPECT_FALSE(w.layers.back().ops[1].recomputed);   // logits
}

TEST(Recompute, KeptActivationsFollowKorthikantiTable2) {
  const double s = 2048, b = 2, h = 2048, a = 16;
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    const Workload w = BuildWorkload(Gpt(r), 2, DType::kBF16);
    EXPECT_DOUBLE_EQ(w.layers[3].activation_bytes, GptLayerActivationBytes(s, b, h, a, r))
        << ToString(r);
    // What is dropped is re-created for the backward: kept + re-created = no recomputation.
    EXPECT_DOUBLE_EQ(w.layers[3].activation_bytes + w.layers[3].recomputed_bytes,
                     GptLayerActivationBytes(s, b, h, a, Recompute::kNone));
  }
  EXPECT_DOUBLE_EQ(GptLayerActivationBytes(s, b, h, a, Recompute::kSelective), 34 * s * b * h);
  EXPECT_DOUBLE_EQ(GptLayerActivationBytes(s, b, h, a, Recompute::kFull), 2 * s * b * h);
}

TEST(Recompute, OnlyTheFirstLayersWhenAsked) {
  ModelSpec m = Gpt(Recompute::kFull);
  m.recompute_layers = 2;
  const Workload w = BuildWorkload(m, 1, DType::kBF16);
  EXPECT_TRUE(w.layers[1].ops[0].recomputed);
  EXPECT_TRUE(w.layers[2].ops[0].recomputed);
  EXPECT_FALSE(w.layers[3].ops[0].recomputed);
  EXPECT_GT(w.layers[3].activation_bytes, w.layers[2].activation_bytes);
}

TEST(Recompute, OnlyTheFlaggedLayers) {
  Workload w = BuildWorkload(Gpt(Recompute::kNone), 1, DType::kBF16);
  const Workload plain = w;
  std::vector<bool> flags(w.layers.size(), false);
  flags[0] = true;  // the embedding: not recomputable, ignored
  flags[2] = true;
  flags[5] = true;
  ApplyRecompute(w, Recompute::kFull, flags);
  EXPECT_EQ(w.recompute, Recompute::kFull);
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const LayerCost& L = w.layers[i];
    const bool on = i == 2 || i == 5;
    EXPECT_EQ(L.ops[0].recomputed, on) << L.name;
    EXPECT_DOUBLE_EQ(L.activation_bytes, on ? L.input_bytes : plain.layers[i].activation_bytes)
        << L.name;
    EXPECT_DOUBLE_EQ(L.activation_bytes + L.recomputed_bytes, plain.layers[i].activation_bytes)
        << L.name;
  }
  EXPECT_NEAR(w.RecomputeFlops(), 2 * plain.layers[2].ForwardFlops(), 1e-9 * w.RecomputeFlops());
  // Selective on the same flags re-runs only those layers' attention cores.
  ApplyRecompute(w, Recompute::kSelective, flags);
  for (const OpCost& op : w.layers[2].ops) EXPECT_EQ(op.recomputed, op.attention_core) << op.name;
  for (const OpCost& op : w.layers[3].ops) EXPECT_FALSE(op.recomputed) << op.name;
  // All flags false, or mode none: as no recomputation.
  ApplyRecompute(w, Recompute::kNone, flags);
  EXPECT_DOUBLE_EQ(w.ActivationBytes(), plain.ActivationBytes());
  EXPECT_EQ(w.RecomputeFlops(), 0);
}

TEST(Recompute, PerLayerFlagsNeedOnePerLayer) {
  Workload w = BuildWorkload(Gpt(Recompute::kNone), 1, DType::kBF16);
  try {
    ApplyRecompute(w, Recompute::kFull, std::vector<bool>(3, true));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "ApplyRecompute: 3 per-layer choices for a workload of 26 layers");
  }
}

TEST(Recompute, SelectiveNeedsAttention) {
  ModelSpec m;
  m.kind = "resnet50";
  m.image_size = 224;
  m.classes = 1000;
  m.recompute = Recompute::kSelective;
  EXPECT_THROW(BuildWorkload(m, 1, DType::kBF16), ConfigError);
  m.recompute = Recompute::kFull;
  const Workload w = BuildWorkload(m, 1, DType::kBF16);
  EXPECT_GT(w.RecomputeFlops(), 0);
  EXPECT_FALSE(w.layers.front().ops[0].recomputed);  // the stem is not a block
}

}  // namespace
}  // namespace stratasim
