#include "models/moe.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "models/gpt.h"
#include "models/spec_check.h"
#include "models/transformer.h"

namespace stratasim {
namespace {

void Check(const ModelSpec& s) {
  CheckTransformerSpec(s);
  RequirePositive(s, "experts", s.experts);
  if (s.top_k < 1 || s.top_k > s.experts) {
    FailModel(s, "top_k", std::to_string(s.top_k), "must be in [1, experts]");
  }
  if (!(s.capacity_factor > 0)) {
    FailModel(s, "capacity_factor", std::to_string(s.capacity_factor), "must be > 0");
  }
}

}  // namespace

double MoeParameterCount(const ModelSpec& s) {
  const double l = s.layers, h = s.hidden, V = s.vocabulary, seq = s.sequence, E = s.experts;
  return (V + seq) * h + 2 * h + l * (4 * h * h + 4 * h + 4 * h + h * E + E * (8 * h * h + 5 * h));
}

Workload BuildMoe(const ModelSpec& spec, int micro_batch, DType dtype) {
  Check(spec);
  CheckMicroBatch(spec, micro_batch);
  TransformerLayerShape x = GptLayerShape(spec, micro_batch, dtype);
  x.experts = spec.experts;
  x.top_k = spec.top_k;
  x.capacity_factor = spec.capacity_factor;
  const double tokens = x.micro_batch * x.sequence, e = x.bytes_per_element;
  Workload w;
  w.kind = spec.kind;
  w.dtype = dtype;
  w.micro_batch = micro_batch;
  w.tokens_per_sample = spec.sequence;
  w.input_bytes = tokens * 4;
  w.layers.push_back(
      EmbeddingLayer(tokens, spec.hidden, spec.vocabulary, spec.sequence, e, /*dropout=*/true));
  for (int i = 0; i < spec.layers; ++i) {
    w.layers.push_back(TransformerLayer("layer" + std::to_string(i), x));
  }
  w.layers.push_back(LmHeadLayer("head", tokens, spec.hidden, spec.vocabulary, e,
                                 /*tied=*/true, /*rms_norm=*/false));
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
