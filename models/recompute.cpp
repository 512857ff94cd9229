#include "models/recompute.h"

#include <string>

#include "core/error.h"

namespace stratasim {
namespace {

// Sets L's activation bookkeeping and its ops' `recomputed` flags: no recomputation unless
// `applies`, else `mode`.
void RecomputeLayer(LayerCost& L, Recompute mode, bool applies) {
  double saved = 0, core = 0;
  for (OpCost& op : L.ops) {
    op.recomputed = false;
    saved += op.saved_bytes;
    if (op.attention_core) core += op.saved_bytes;
  }
  L.activation_bytes = saved;
  L.recomputed_bytes = 0;
  if (!applies) return;
  if (mode == Recompute::kFull) {
    for (OpCost& op : L.ops) op.recomputed = true;
    // The kept input is one of the tensors the layer's ops save (its first op's input), so
    // the re-run re-creates the rest: kept + re-created = what no recomputation keeps.
    L.activation_bytes = L.input_bytes;
    L.recomputed_bytes = saved > L.input_bytes ? saved - L.input_bytes : 0;
  } else {
    for (OpCost& op : L.ops) op.recomputed = op.attention_core;
    L.activation_bytes = saved - core;
    L.recomputed_bytes = core;
  }
}

}  // namespace

void ApplyRecompute(Workload& w, Recompute mode, int max_layers) {
  w.recompute = mode;
  int done = 0;
  for (LayerCost& L : w.layers) {
    const bool applies =
        L.recomputable && mode != Recompute::kNone && (max_layers <= 0 || done < max_layers);
    if (applies) ++done;
    RecomputeLayer(L, mode, applies);
  }
}

void ApplyRecompute(Workload& w, Recompute mode, const std::vector<bool>& layers) {
  if (layers.size() != w.layers.size()) {
    throw Error("ApplyRecompute: " + std::to_string(layers.size()) +
                " per-layer choices for a workload of " + std::to_string(w.layers.size()) +
                " layers");
  }
  w.recompute = mode;
  for (size_t i = 0; i < w.layers.size(); ++i) {
    LayerCost& L = w.layers[i];
    RecomputeLayer(L, mode, L.recomputable && mode != Recompute::kNone && layers[i]);
  }
}

}  // namespace stratasim
