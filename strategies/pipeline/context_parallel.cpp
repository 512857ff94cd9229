#include "strategies/pipeline/context_parallel.h"

#include <string>

#include "core/model_presets.h"

namespace stratasim {
namespace {

std::string Str(int n) { return std::to_string(n); }

// 1/c of `cost`: the rank's query rows (m) of the full sequence's.
void Divide(KernelCost& cost, double c) {
  cost.flops /= c;
  cost.bytes /= c;
  if (cost.gemm.known()) cost.gemm.m /= c;
}

}  // namespace

void CheckContextDegree(const ModelSpec& m, int c, const OptionReader& opt) {
  if (c == 1) return;
  if (!IsTransformerKind(m.kind)) {
    std::string kinds;
    for (const std::string& k : TransformerKinds()) kinds += (kinds.empty() ? "" : ", ") + k;
    throw opt.Fail("context",
                   "context parallelism splits a transformer's sequences: model kind \"" + m.kind +
                       "\" is not supported (" + kinds + ")");
  }
  if (m.sequence % (2 * c) != 0) {
    throw opt.Fail("context", "the sequence (" + Str(m.sequence) +
                                  ") must be a multiple of 2 x context (" + Str(2 * c) +
                                  "): the zig-zag split cuts it into 2 x context chunks");
  }
}

Workload ContextParallelWorkload(const ModelSpec& plain, int micro_batch, DType dtype,
                                 std::uint64_t seed, int c) {
  ModelSpec base = plain;
  base.recompute = Recompute::kNone;
  base.recompute_layers = 0;
  const Workload full = BuildWorkload(base, micro_batch, dtype, seed);
  ModelSpec part = base;
  part.sequence = base.sequence / c;
  Workload w = BuildWorkload(part, micro_batch, dtype, seed);
  if (w.layers.size() != full.layers.size()) {
    throw Error("context parallelism: the model built on s/c tokens has other layers");
  }
  for (size_t i = 0; i < w.layers.size(); ++i) {
    LayerCost& L = w.layers[i];
    const LayerCost& F = full.layers[i];
    L.params = F.params;  // e.g. position embeddings: the table of all s positions
    for (size_t j = 0; j < L.ops.size() && j < F.ops.size(); ++j) {
      if (!F.ops[j].attention_core) continue;
      OpCost op = F.ops[j];
      for (KernelCost* k : {&op.forward, &op.backward_input, &op.backward_weight}) Divide(*k, c);
      op.saved_bytes /= c;
      L.ops[j] = op;
    }
  }
  w.params = full.params;
  w.tokens_per_sample = full.tokens_per_sample;
  FinalizeWorkload(w);
  return w;
}

ContextRing ContextRingOf(const ModelSpec& m, int micro_batch, DType dtype, int c, int t) {
  const double head_dim = static_cast<double>(m.hidden) / m.heads;
  const double kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
  ContextRing ring;
  ring.c = c;
  ring.head_dim = head_dim;
  ring.kv_bytes = 2.0 * micro_batch * (static_cast<double>(m.sequence) / c) * (kv_heads / t) *
                  head_dim * BytesPerElement(dtype);
  return ring;
}

}  // namespace stratasim
