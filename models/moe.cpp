#include "models/moe.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "models/gpt.h"
#include "models/llama.h"
#include "models/spec_check.h"
#include "models/transformer.h"

namespace stratasim {
namespace {

bool LlamaStyle(const ModelSpec& s) { return s.architecture == "llama"; }

void Check(const ModelSpec& s) {
  CheckTransformerSpec(s);
  if (!s.architecture.empty() && s.architecture != "gpt" && !LlamaStyle(s)) {
    FailModel(s, "architecture", s.architecture, "must be gpt or llama");
  }
  const int kv = s.kv_heads > 0 ? s.kv_heads : s.heads;
  if (s.heads % kv != 0) FailModel(s, "kv_heads", std::to_string(s.kv_heads), "must divide heads");
  RequirePositive(s, "experts", s.experts);
  if (s.top_k < 1 || s.top_k > s.experts) {
    FailModel(s, "top_k", std::to_string(s.top_k), "must be in [1, experts]");
  }
  if (!(s.capacity_factor > 0)) {
    FailModel(s, "capacity_factor", std::to_string(s.capacity_factor), "must be > 0");
  }
}

}  // namespace

TransformerLayerShape MoeLayerShape(const ModelSpec& spec, int micro_batch, DType dtype) {
  TransformerLayerShape x = GptLayerShape(spec, micro_batch, dtype);
  x.experts = spec.experts;
  x.top_k = spec.top_k;
  x.capacity_factor = spec.capacity_factor;
  if (LlamaStyle(spec)) MakeLlamaStyle(spec, x);
  return x;
}

double MoeParameterCount(const ModelSpec& s) {
  if (LlamaStyle(s)) {
    // Embedding and untied output V h each, final RMSNorm h, and per layer the attention
    // h (h + 2 kv) + h^2, two RMSNorms 2h, the gate h E and E SwiGLU experts of 3 h f.
    const double l = s.layers, h = s.hidden, V = s.vocabulary, E = s.experts;
    const double f = LlamaFfnHidden(s);
    const double kv = (s.kv_heads > 0 ? s.kv_heads : s.heads) * (h / s.heads);
    return 2 * V * h + h + l * (h * (h + 2 * kv) + h * h + 2 * h + h * E + E * 3 * h * f);
  }
  const double l = s.layers, h = s.hidden, V = s.vocabulary, seq = s.sequence, E = s.experts;
  return (V + seq) * h + 2 * h + l * (4 * h * h + 4 * h + 4 * h + h * E + E * (8 * h * h + 5 * h));
}

Workload BuildMoe(const ModelSpec& spec, int micro_batch, DType dtype) {
  Check(spec);
  CheckMicroBatch(spec, micro_batch);
  const TransformerLayerShape x = MoeLayerShape(spec, micro_batch, dtype);
  const bool llama = LlamaStyle(spec);
  const double tokens = x.micro_batch * x.sequence, e = x.bytes_per_element;
  Workload w;
  w.kind = spec.kind;
  w.dtype = dtype;
  w.micro_batch = micro_batch;
  w.tokens_per_sample = spec.sequence;
  w.input_bytes = tokens * 4;
  // GPT style: learned positions and dropout; llama style: rotary positions, no dropout.
  w.layers.push_back(EmbeddingLayer(tokens, spec.hidden, spec.vocabulary, llama ? 0 : spec.sequence,
                                    e, /*dropout=*/!llama));
  for (int i = 0; i < spec.layers; ++i) {
    w.layers.push_back(TransformerLayer("layer" + std::to_string(i), x));
  }
  w.layers.push_back(LmHeadLayer("head", tokens, spec.hidden, spec.vocabulary, e,
                                 /*tied=*/!llama, /*rms_norm=*/llama));
  FinalizeWorkload(w);
  return w;
}

MoeAllToAll MoeAllToAllVolumes(const std::vector<std::vector<double>>& tokens, int experts_per_rank,
                               double hidden, DType dtype, double capacity) {
  const int n = static_cast<int>(tokens.size());
  if (n < 1 || experts_per_rank < 1) {
    throw Error("MoE routing: needs at least one rank and one expert per rank");
  }
  const int experts = n * experts_per_rank;
  for (int r = 0; r < n; ++r) {
    if (static_cast<int>(tokens[r].size()) != experts) {
      throw Error("MoE routing: row " + std::to_string(r) + " has " +
                  std::to_string(tokens[r].size()) + " experts, expected " +
                  std::to_string(experts) + " (ranks x experts_per_rank)");
    }
    for (double t : tokens[r]) {
      if (!(t >= 0)) throw Error("MoE routing: token counts must be >= 0");
    }
  }
  const double bytes_per_token = hidden * BytesPerElement(dtype);
  MoeAllToAll out;
  out.dispatch_bytes.assign(static_cast<size_t>(n) * n, 0);
  out.combine_bytes.assign(static_cast<size_t>(n) * n, 0);
  for (int x = 0; x < experts; ++x) {
    const int owner = x / experts_per_rank;
    double room = capacity > 0 ? capacity : 0;
    for (int r = 0; r < n; ++r) {
      double sent = tokens[r][x];
      if (capacity > 0) {
        sent = std::min(sent, room);
        room -= sent;
        out.dropped_tokens += tokens[r][x] - sent;
      }
      // A token whose expert lives on its own rank still crosses the all-to-all's local copy.
      out.dispatch_bytes[static_cast<size_t>(r) * n + owner] += sent * bytes_per_token;
      out.combine_bytes[static_cast<size_t>(owner) * n + r] += sent * bytes_per_token;
    }
  }
  return out;
}

}  // namespace stratasim
