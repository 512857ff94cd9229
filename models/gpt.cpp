#include "models/gpt.h"

namespace stratasim {
namespace {

// Elementwise kernel reading and writing `elements` values of `e` bytes `passes` times.
OpCost Elementwise(const std::string& name, double elements, double e, double passes) {
  OpCost op;
  op.name = name;
  op.kind = OpKind::kElementwise;
  op.forward_bytes = passes * elements * e;
  op.backward_bytes = 2 * op.forward_bytes;  // gradient in, gradient out, saved input
  return op;
}

// GEMM of an [m, k] activation by a [k, n] weight: forward 2mkn, backward 4mkn (input
// gradient and weight gradient are one GEMM each).
OpCost Gemm(const std::string& name, double m, double k, double n, double e) {
  OpCost op;
  op.name = name;
  op.kind = OpKind::kGemm;
  op.forward_flops = 2 * m * k * n;
  op.backward_flops = 2 * op.forward_flops;
  op.forward_bytes = e * (m * k + k * n + m * n);
  op.backward_bytes = 2 * op.forward_bytes;
  return op;
}

void Check(const ModelSpec& s) {
  auto fail = [&](const std::string& key, int value, const std::string& rule) {
    throw ConfigError(s.where, "model." + key, std::to_string(value), rule);
  };
  if (s.kind != "gpt") {
    throw ConfigError(s.where, "model.kind", s.kind, "unknown model kind (known: gpt)");
  }
  if (s.layers < 1) fail("layers", s.layers, "must be >= 1");
  if (s.hidden < 1) fail("hidden", s.hidden, "must be >= 1");
  if (s.heads < 1 || s.hidden % s.heads != 0) fail("heads", s.heads, "must divide hidden");
  if (s.sequence < 1) fail("sequence", s.sequence, "must be >= 1");
  if (s.vocabulary < 1) fail("vocabulary", s.vocabulary, "must be >= 1");
}

}  // namespace

double GptParameterCount(const ModelSpec& s) {
  const double l = s.layers, h = s.hidden, V = s.vocabulary, seq = s.sequence;
  return 12 * l * h * h * (1 + 13 / (12 * h) + (V + seq) / (12 * l * h)) + 2 * h;
}

double GptTrainingFlops(const ModelSpec& s, double batch) {
  const double l = s.layers, h = s.hidden, V = s.vocabulary, seq = s.sequence;
  return 72 * batch * seq * l * h * h * (1 + seq / (6 * h) + V / (12 * l * h));
}

GptWorkload BuildGpt(const ModelSpec& spec, int micro_batch, DType dtype) {
  Check(spec);
  const double b = micro_batch, s = spec.sequence, h = spec.hidden, a = spec.heads;
  const double V = spec.vocabulary, e = BytesPerElement(dtype);
  const double tokens = b * s;  // rows of every activation matrix
  GptWorkload w;
  w.dtype = dtype;
  w.micro_batch = micro_batch;
  w.sequence = spec.sequence;

  LayerCost embed;
  embed.name = "embedding";
  embed.ops.push_back(Elementwise("embed", tokens * h, e, 3));  // two gathers and the sum
  embed.params = (V + s) * h;  // token + position tables; the head reuses the token table
  embed.activation_bytes = 0;
  w.layers.push_back(embed);

  for (int i = 0; i < spec.layers; ++i) {
    LayerCost L;
    L.name = "layer" + std::to_string(i);
    L.ops.push_back(Elementwise("ln1", tokens * h, e, 2));
    L.ops.push_back(Gemm("qkv", tokens, h, 3 * h, e));
    // Scores Q K^T and the product with V: 2 * (2 b s^2 h) FLOPs; the [b, a, s, s] score
    // matrix is written, softmaxed, dropped out and read back: about 6 passes over it.
    OpCost attn;
    attn.name = "attention";
    attn.kind = OpKind::kAttention;
    attn.forward_flops = 4 * b * s * s * h;
    attn.backward_flops = 2 * attn.forward_flops;
    attn.forward_bytes = e * (4 * tokens * h + 6 * b * a * s * s);
    attn.backward_bytes = 2 * attn.forward_bytes;
    L.ops.push_back(attn);
    L.ops.push_back(Gemm("proj", tokens, h, h, e));
    L.ops.push_back(Elementwise("residual_ln2", tokens * h, e, 5));
    OpCost up = Gemm("mlp_up", tokens, h, 4 * h, e);
    up.forward_bytes += e * 2 * tokens * 4 * h;  // GeLU over the 4h-wide output
    up.backward_bytes += e * 3 * tokens * 4 * h;
    L.ops.push_back(up);
    L.ops.push_back(Gemm("mlp_down", tokens, 4 * h, h, e));
    L.ops.push_back(Elementwise("residual", tokens * h, e, 3));
    L.params = 12 * h * h + 13 * h;
    // Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
    // eq. 1: s b h (34 + 5 a s / h) bytes per layer with 16-bit activations, no recomputation.
    L.activation_bytes = s * b * h * (34 + 5 * a * s / h);
    w.layers.push_back(L);
  }

  LayerCost head;
  head.name = "head";
  head.ops.push_back(Elementwise("final_ln", tokens * h, e, 2));
  head.ops.push_back(Gemm("logits", tokens, h, V, e));
  // Softmax cross-entropy over the vocabulary in FP32: read logits, write probabilities.
  head.ops.push_back(Elementwise("cross_entropy", tokens * V, 4, 2));
  head.params = 2 * h;
  head.activation_bytes = tokens * h * e + tokens * V * 4;  // LN input and FP32 logits
  w.layers.push_back(head);

  for (const LayerCost& L : w.layers) w.params += L.params;
  return w;
}

}  // namespace stratasim
