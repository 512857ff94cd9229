#include "models/gpt.h"

#include "models/ops.h"
#include "models/spec_check.h"

namespace stratasim {

double GptParameterCount(const ModelSpec& s) {
  const double l = s.layers, h = s.hidden, V = s.vocabulary, seq = s.sequence;
  // An untied output head (sparse_embedding) owns its own V x h projection.
  const double head = s.sparse_embedding ? V * h : 0;
  return 12 * l * h * h * (1 + 13 / (12 * h) + (V + seq) / (12 * l * h)) + 2 * h + head;
}

double GptTrainingFlops(const ModelSpec& s, double batch, Recompute recompute) {
  const double l = s.layers, h = s.hidden, V = s.vocabulary, seq = s.sequence;
  const double B = batch;
  switch (recompute) {
    case Recompute::kFull:
      return 96 * B * seq * l * h * h * (1 + seq / (6 * h) + V / (16 * l * h));
    case Recompute::kSelective:
      return 72 * B * seq * l * h * h * (1 + 2 * seq / (9 * h) + V / (12 * l * h));
    case Recompute::kNone:
      break;
  }
  return 72 * B * seq * l * h * h * (1 + seq / (6 * h) + V / (12 * l * h));
}

LayerCost EmbeddingLayer(double tokens, double hidden, double vocabulary, double positions,
                         double e, bool dropout) {
  LayerCost L;
  L.name = "embedding";
  // Gathers rows of the token (and position) tables and sums them; the backward scatters the
  // gradient into the tables: a weight gradient with no input gradient (the inputs are ids).
  OpCost embed = Elementwise("embed", tokens * hidden, e, positions > 0 ? 2 : 1, 1);
  embed.backward_weight.bytes = embed.backward_input.bytes;
  embed.backward_input = KernelCost{};
  L.ops.push_back(embed);
  if (dropout) L.ops.push_back(Dropout("embed_dropout", tokens * hidden, e));
  L.params = (vocabulary + positions) * hidden;
  return L;
}

LayerCost LmHeadLayer(const std::string& name, double tokens, double hidden, double vocabulary,
                      double e, bool tied, bool rms_norm) {
  LayerCost L;
  L.name = name;
  OpCost norm = Elementwise("final_norm", tokens * hidden, e, 1, 1);
  norm.saved_bytes = tokens * hidden * e;
  L.ops.push_back(norm);
  L.ops.push_back(Linear("logits", tokens, hidden, vocabulary, e));
  // Softmax cross-entropy in FP32 over the vocabulary: reads the logits, writes and keeps the
  // probabilities for the backward.
  OpCost loss = Elementwise("cross_entropy", tokens * vocabulary, 4, 1, 1);
  loss.saved_bytes = tokens * vocabulary * 4;
  L.ops.push_back(loss);
  L.params = (rms_norm ? 1 : 2) * hidden + (tied ? 0 : vocabulary * hidden);
  return L;
}

TransformerLayerShape GptLayerShape(const ModelSpec& spec, int micro_batch, DType dtype) {
  TransformerLayerShape x;
  x.micro_batch = micro_batch;
  x.sequence = spec.sequence;
  x.hidden = spec.hidden;
  x.heads = spec.heads;
  x.kv_heads = spec.heads;
  x.ffn_hidden = spec.ffn_hidden > 0 ? spec.ffn_hidden : 4.0 * spec.hidden;
  x.bytes_per_element = BytesPerElement(dtype);
  x.attention = spec.attention;
  x.causal = spec.causal.value_or(true);  // a decoder (BERT's builder overrides it)
  return x;
}

Workload BuildGpt(const ModelSpec& spec, int micro_batch, DType dtype) {
  CheckTransformerSpec(spec);
  CheckMicroBatch(spec, micro_batch);
  const TransformerLayerShape x = GptLayerShape(spec, micro_batch, dtype);
  const double tokens = x.micro_batch * x.sequence, e = x.bytes_per_element;
  Workload w;
  w.kind = spec.kind;
  w.dtype = dtype;
  w.micro_batch = micro_batch;
  w.tokens_per_sample = spec.sequence;
  w.input_bytes = tokens * 4;  // int32 token ids
  w.layers.push_back(
      EmbeddingLayer(tokens, spec.hidden, spec.vocabulary, spec.sequence, e, /*dropout=*/true));
  for (int i = 0; i < spec.layers; ++i) {
    w.layers.push_back(TransformerLayer("layer" + std::to_string(i), x));
  }
  // A tied table's gradient is dense: the logits' weight gradient touches every row. A sparse
  // embedding therefore has its own table, and the head its own dense projection.
  w.layers.push_back(LmHeadLayer("head", tokens, spec.hidden, spec.vocabulary, e,
                                 /*tied=*/!spec.sparse_embedding, /*rms_norm=*/false));
  if (spec.sparse_embedding)
    w.sparse_embedding = SparseEmbedding{0, 1.0 * spec.vocabulary, 1.0 * spec.hidden};
  FinalizeWorkload(w);
  return w;
}

}  // namespace stratasim
