#include "strategies/precision/layer_precision.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "models/ops.h"

namespace stratasim {
namespace {

// Y[m, n] = X[m, k] W[k, n] in BF16, with a norm before it, as one layer owning k n + 2 k
// parameters (the norm's two vectors).
constexpr double m = 256, k = 64, n = 128;

Workload OneLinear() {
  Workload w;
  w.dtype = DType::kBF16;
  LayerCost L;
  L.name = "l0";
  OpCost norm = Elementwise("norm", m * k, 2, 1, 1);
  L.ops.push_back(norm);
  L.ops.push_back(Linear("fc", m, k, n, 2));
  L.params = k * n + 2 * k;
  w.layers.push_back(L);
  w.params = L.params;
  return w;
}

const OpCost& Op(const LayerCost& L, const std::string& name) {
  for (const OpCost& op : L.ops) {
    if (op.name == name) return op;
  }
  throw Error("no op " + name);
}

TEST(LayerPrecision, WeightLayersAreTheGemmsWithWeightGradients) {
  Workload w = OneLinear();
  LayerCost attn;
  attn.name = "l1";
  attn.ops.push_back(BatchedMatmul("scores", 4, m, 16, m, 2));  // no weight
  attn.ops.push_back(Linear("proj", m, k, k, 2));
  attn.ops.push_back(Conv2d("conv", 2, 3, 32, 16, 3, 1, 2));
  w.layers.push_back(attn);
  const std::vector<WeightLayer> layers = WeightLayers(w);
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0].layer, 0);
  EXPECT_EQ(layers[0].op, 1);
  EXPECT_DOUBLE_EQ(layers[0].params, k * n);
  EXPECT_EQ(layers[1].layer, 1);
  EXPECT_EQ(layers[1].op, 1);
  EXPECT_DOUBLE_EQ(layers[1].params, k * k);
  EXPECT_DOUBLE_EQ(layers[2].params, 3 * 3 * 3 * 16);  // in_channels x kernel^2 x out_channels
}

TEST(LayerPrecision, Fp8LayerRunsItsGemmsInFp8WithItsCastsAndFp8Gradient) {
  Workload w = OneLinear();
  const OpCost bf16 = w.layers[0].ops[1];
  const LayerPrecision lp = ApplyLayerFormats(w, {DType::kFP8}, DType::kBF16, 2);
  const LayerCost& L = w.layers[0];
  ASSERT_EQ(L.ops.size(), 5u);  // norm, fc_dw_quant, fc_quant, fc, fc_dy_quant
  EXPECT_EQ(L.ops[0].name, "norm");
  EXPECT_EQ(L.ops[1].name, "fc_dw_quant");
  EXPECT_EQ(L.ops[2].name, "fc_quant");
  EXPECT_EQ(L.ops[3].name, "fc");
  EXPECT_EQ(L.ops[4].name, "fc_dy_quant");
  const OpCost& fc = Op(L, "fc");
  for (const KernelCost* c : {&fc.forward, &fc.backward_input, &fc.backward_weight}) {
    ASSERT_TRUE(c->dtype.has_value());
    EXPECT_EQ(*c->dtype, DType::kFP8);
  }
  EXPECT_DOUBLE_EQ(fc.forward.flops, bf16.forward.flops);
  EXPECT_DOUBLE_EQ(fc.BackwardFlops(), bf16.BackwardFlops());
  // Operands at 1 byte, results at 2.
  EXPECT_DOUBLE_EQ(fc.forward.bytes, (m * k + k * n) + 2 * m * n);
  EXPECT_DOUBLE_EQ(fc.backward_input.bytes, (m * n + k * n) + 2 * m * k);
  EXPECT_DOUBLE_EQ(fc.backward_weight.bytes, (m * k + m * n) + 2 * k * n);
  EXPECT_DOUBLE_EQ(fc.saved_bytes, m * k);  // X kept in FP8
  // Quantize kernels: read BF16 (2 bytes), write FP8 (1 byte).
  EXPECT_DOUBLE_EQ(Op(L, "fc_quant").forward.bytes, 3 * (m * k + k * n));
  EXPECT_TRUE(Op(L, "fc_quant").backward_input.empty());
  EXPECT_TRUE(Op(L, "fc_dy_quant").forward.empty());
  EXPECT_DOUBLE_EQ(Op(L, "fc_dy_quant").backward_input.bytes, 3 * m * n);
  EXPECT_TRUE(Op(L, "fc_dw_quant").forward.empty());
  EXPECT_DOUBLE_EQ(Op(L, "fc_dw_quant").backward_input.bytes, 3 * k * n);
  // The weight's gradient at 1 byte, the norm's at 2; dequantized after the all-reduce.
  ASSERT_EQ(lp.grad_bytes.size(), 1u);
  EXPECT_DOUBLE_EQ(lp.grad_bytes[0], k * n * 1 + 2 * k * 2);
  EXPECT_DOUBLE_EQ(lp.decode_bytes[0], k * n * (1 + 2));
}

TEST(LayerPrecision, Int4HalvesTheBytesOfInt8) {
  Workload w8 = OneLinear(), w4 = OneLinear();
  const LayerPrecision p8 = ApplyLayerFormats(w8, {DType::kINT8}, DType::kBF16, 2);
  const LayerPrecision p4 = ApplyLayerFormats(w4, {DType::kINT4}, DType::kBF16, 2);
  EXPECT_DOUBLE_EQ(p8.grad_bytes[0] - 4 * k, k * n);
  EXPECT_DOUBLE_EQ(p4.grad_bytes[0] - 4 * k, k * n / 2);
  EXPECT_DOUBLE_EQ(Op(w4.layers[0], "fc").forward.bytes, 0.5 * (m * k + k * n) + 2 * m * n);
  EXPECT_EQ(*Op(w4.layers[0], "fc").forward.dtype, DType::kINT4);
}

TEST(LayerPrecision, TheStorageFormatLeavesTheLayerAsItWas) {
  Workload w = OneLinear();
  const Workload before = w;
  const LayerPrecision lp = ApplyLayerFormats(w, {DType::kBF16}, DType::kBF16, 2);
  ASSERT_EQ(w.layers[0].ops.size(), before.layers[0].ops.size());
  for (size_t i = 0; i < w.layers[0].ops.size(); ++i) {
    const OpCost& a = w.layers[0].ops[i];
    const OpCost& b = before.layers[0].ops[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_FALSE(a.forward.dtype.has_value());
    EXPECT_EQ(a.forward.bytes, b.forward.bytes);
    EXPECT_EQ(a.backward_weight.bytes, b.backward_weight.bytes);
  }
  EXPECT_EQ(lp.grad_bytes[0], w.params * 2);
  EXPECT_EQ(lp.decode_bytes[0], 0);
}

TEST(LayerPrecision, ConvolutionReadsItsImageAndFiltersInTheFormat) {
  Workload w;
  LayerCost L;
  L.name = "block";
  // 2 images of 3 x 32 x 32 into 16 channels, 3 x 3, stride 1: m = 2048, k = 27, n = 16.
  L.ops.push_back(Conv2d("conv", 2, 3, 32, 16, 3, 1, 2));
  L.params = 27 * 16;
  w.layers.push_back(L);
  ApplyLayerFormats(w, {DType::kINT8}, DType::kBF16, 2);
  const OpCost& conv = Op(w.layers[0], "conv");
  const double image = 2 * 3 * 32 * 32, filters = 27 * 16, out = 2048 * 16;
  EXPECT_DOUBLE_EQ(conv.forward.bytes, image + filters + 2 * out);
  EXPECT_DOUBLE_EQ(conv.backward_input.bytes, out + filters + 2 * image);
  EXPECT_DOUBLE_EQ(conv.backward_weight.bytes, image + out + 2 * filters);
  EXPECT_DOUBLE_EQ(Op(w.layers[0], "conv_quant").forward.bytes, 3 * (image + filters));
}

TEST(LayerPrecision, TiedWeightsKeepTheirGradientInTheStorageFormat) {
  // A head whose logits GEMM uses the embedding's table: the layer owns only its norm.
  Workload w;
  LayerCost head;
  head.name = "head";
  head.ops.push_back(Linear("logits", m, k, 1000, 2));
  head.params = 2 * k;
  w.layers.push_back(head);
  const LayerPrecision lp = ApplyLayerFormats(w, {DType::kFP8}, DType::kBF16, 2);
  EXPECT_EQ(*Op(w.layers[0], "logits").forward.dtype, DType::kFP8);
  for (const OpCost& op : w.layers[0].ops) EXPECT_NE(op.name, "logits_dw_quant");
  EXPECT_DOUBLE_EQ(lp.grad_bytes[0], 2 * k * 2);
  EXPECT_DOUBLE_EQ(lp.decode_bytes[0], 0);
}

TEST(LayerPrecision, OneFormatPerWeightLayer) {
  Workload w = OneLinear();
  EXPECT_THROW(ApplyLayerFormats(w, {DType::kFP8, DType::kFP8}, DType::kBF16, 2), Error);
}

}  // namespace
}  // namespace stratasim
