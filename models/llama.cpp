#include "models/llama.h"

#include <cmath>

#include "models/gpt.h"
#include "models/spec_check.h"
#include "models/transformer.h"

namespace stratasim {
namespace {

double KvHeads(const ModelSpec& s) { return s.kv_heads > 0 ? s.kv_heads : s.heads; }

void Check(const ModelSpec& s) {
  CheckTransformerSpec(s);
  if (s.kv_heads < 0 || s.heads % static_cast<int>(KvHeads(s)) != 0) {
    FailModel(s, "kv_heads", std::to_string(s.kv_heads), "must divide heads");
  }
}

}  // namespace

int LlamaFfnHidden(const ModelSpec& s) {
  if (s.ffn_hidden > 0) return s.ffn_hidden;
  const double two_thirds = 2.0 * 4.0 * s.hidden / 3.0;
  return static_cast<int>(256 * std::ceil(two_thirds / 256));
}

double LlamaParameterCount(const ModelSpec& s) {
  const double l = s.layers, h = s.hidden, V = s.vocabulary, f = LlamaFfnHidden(s);
  const double kv = KvHeads(s) * (h / s.heads);
  return l * (h * (h + 2 * kv) + h * h + 3 * h * f + 2 * h) + 2 * V * h + h;
}

void MakeLlamaStyle(const ModelSpec& spec, TransformerLayerShape& x) {
  x.kv_heads = KvHeads(spec);
  x.ffn_hidden = LlamaFfnHidden(spec);
  x.rms_norm = true;
  x.swiglu = true;
  x.rotary = true;
  x.dropout = false;
  x.bias = false;
}

Workload BuildLlama(const ModelSpec& spec, int micro_batch, DType dtype) {
  Check(spec);
  CheckMicroBatch(spec, micro_batch);
  TransformerLayerShape x = GptLayerShape(spec, micro_batch, dtype);
  MakeLlamaStyle(spec, x);
  const double tokens = x.micro_batch * x.sequence, e = x.bytes_per_element;
  Workload w;
  w.kind = spec.kind;
  w.dtype = dtype;
  w.micro_batch = micro_batch;
  w.tokens_per_sample = spec.sequence;
  w.input_bytes = tokens * 4;
  w.layers.push_back(EmbeddingLayer(tokens, spec.hidden, spec.vocabulary, 0, e, /*dropout=*/false));
  for (int i = 0; i < spec.layers; ++i) {
    w.layers.push_back(TransformerLayer("layer" + std::to_string(i), x));
  }
  w.layers.push_back(LmHeadLayer("head", tokens, spec.hidden, spec.vocabulary, e,
                                 /*tied=*/false, /*rms_norm=*/true));
  FinalizeWorkload(w);
  return w;
}

}  // namespace stratasim
