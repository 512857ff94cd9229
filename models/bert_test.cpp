#include "models/bert.h"

#include <gtest/gtest.h>

#include "core/model_presets.h"
#include "models/test_util.h"

namespace stratasim {
namespace {

TEST(Bert, PresetsHaveThePublishedSizes) {
  // Devlin et al. 2019: BERT-BASE 110M, BERT-LARGE 340M, counting the pooler and NSP head
  // that this model leaves out; Hugging Face's BertForMaskedLM has 109,514,298 and 335,174,458.
  const ModelSpec base = *FindModelPreset("bert-base");
  const ModelSpec large = *FindModelPreset("bert-large");
  EXPECT_DOUBLE_EQ(BertParameterCount(base), 109514298);
  EXPECT_DOUBLE_EQ(BertParameterCount(large), 335174458);
  const Workload w = BuildBert(base, 2, DType::kBF16);
  EXPECT_DOUBLE_EQ(w.params, BertParameterCount(base));
  EXPECT_EQ(w.layers.size(), 12u + 2u);
}

TEST(Bert, PerOpFlopsSumToTheClosedForm) {
  ModelSpec m = *FindModelPreset("bert-large");
  m.attention = Attention::kUnfused;  // the published figures are of unfused attention
  const double b = 8, s = 512, l = 24, h = 1024, V = 30522;
  const Workload w = BuildBert(m, 8, DType::kBF16);
  // Encoder layers as GPT's (72 B s l h^2 (1 + s/6h)), MLM transform 6 B s h^2, logits 6 B s h V.
  const double closed =
      72 * b * s * l * h * h * (1 + s / (6 * h)) + 6 * b * s * h * h + 6 * b * s * h * V;
  const double flops = testing::TrainingFlops(w);
  EXPECT_NEAR(flops, closed, 1e-9 * flops);
}

TEST(Bert, PostNormLayersKeepTheSameActivationsAsGpt) {
  ModelSpec m = *FindModelPreset("bert-base");
  m.attention = Attention::kUnfused;  // the published figures are of unfused attention
  const Workload w = BuildWorkload(m, 4, DType::kBF16);
  const double s = 512, b = 4, h = 768, a = 12;
  EXPECT_DOUBLE_EQ(w.layers[1].activation_bytes, s * b * h * (34 + 5 * a * s / h));
  EXPECT_EQ(w.layers[1].ops.front().name, "qkv");  // post-LN: the norm comes last
  EXPECT_EQ(w.layers[1].ops.back().name, "norm2");
}

}  // namespace
}  // namespace stratasim
