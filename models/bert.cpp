#include "models/bert.h"

#include "models/gpt.h"
#include "models/ops.h"
#include "models/spec_check.h"
#include "models/transformer.h"

namespace stratasim {

double BertParameterCount(const ModelSpec& s) {
  const double l = s.layers, h = s.hidden, V = s.vocabulary, seq = s.sequence;
  const double ffn = s.ffn_hidden > 0 ? s.ffn_hidden : 4 * h;
  const double layer = 4 * h * h + 4 * h + 2 * h * ffn + ffn + h + 4 * h;
  return (V + seq + 2) * h + 2 * h + l * layer + h * h + 3 * h + V;
}

Workload BuildBert(const ModelSpec& spec, int micro_batch, DType dtype) {
  CheckTransformerSpec(spec);
  CheckMicroBatch(spec, micro_batch);
  TransformerLayerShape x = GptLayerShape(spec, micro_batch, dtype);
  x.post_norm = true;
  x.causal = spec.causal.value_or(false);  // an encoder: every token attends to every token
  const double tokens = x.micro_batch * x.sequence, h = spec.hidden, e = x.bytes_per_element;
  const double V = spec.vocabulary;
  Workload w;
  w.kind = spec.kind;
  w.dtype = dtype;
  w.micro_batch = micro_batch;
  w.tokens_per_sample = spec.sequence;
  w.input_bytes = tokens * 4 * 2;  // int32 token ids and token types

  // Token, position and token-type tables (two types), then LayerNorm and dropout.
  LayerCost embed = EmbeddingLayer(tokens, h, V, spec.sequence + 2, e, /*dropout=*/false);
  embed.ops[0].forward.bytes += tokens * h * e;  // the third table's gather
  OpCost norm = Elementwise("embed_norm", tokens * h, e, 1, 1);
  norm.saved_bytes = tokens * h * e;
  embed.ops.push_back(norm);
  embed.ops.push_back(Dropout("embed_dropout", tokens * h, e));
  embed.params += 2 * h;
  w.layers.push_back(embed);

  for (int i = 0; i < spec.layers; ++i) {
    w.layers.push_back(TransformerLayer("layer" + std::to_string(i), x));
  }

  // MLM head: transform (dense + GeLU + LayerNorm), then the tied logits and the loss.
  LayerCost head = LmHeadLayer("mlm_head", tokens, h, V, e, /*tied=*/true, /*rms_norm=*/false);
  OpCost gelu = Elementwise("transform_gelu", tokens * h, e, 1, 1);
  gelu.saved_bytes = tokens * h * e;
  head.ops.insert(head.ops.begin(), {Linear("transform", tokens, h, h, e), gelu});
  head.params += h * h + h + V;  // dense weight and bias, logits bias
  w.layers.push_back(head);

  FinalizeWorkload(w);
  return w;
}

}  // namespace stratasim
