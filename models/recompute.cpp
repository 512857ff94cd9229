#include "models/recompute.h"

namespace stratasim {

namespace {

// Recomputes layer i when chosen(i, recomputable layers so far) says so.
template <typename Chosen>
void Apply(Workload& w, Recompute mode, Chosen chosen) {
  w.recompute = mode;
  int done = 0;
  for (size_t i = 0; i < w.layers.size(); ++i) {
    LayerCost& L = w.layers[i];
    double saved = 0, core = 0;
    for (OpCost& op : L.ops) {
      op.recomputed = false;
      saved += op.saved_bytes;
      if (op.attention_core) core += op.saved_bytes;
    }
    L.activation_bytes = saved;
    L.recomputed_bytes = 0;
    const bool applies = L.recomputable && mode != Recompute::kNone && chosen(i, done);
    if (!applies) continue;
    ++done;
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
}

}  // namespace

void ApplyRecompute(Workload& w, Recompute mode, int max_layers) {
  Apply(w, mode, [max_layers](size_t, int done) { return max_layers <= 0 || done < max_layers; });
}

void ApplyRecompute(Workload& w, Recompute mode, const std::vector<bool>& layers) {
  Apply(w, mode, [&layers](size_t i, int) { return i < layers.size() && layers[i]; });
}

}  // namespace stratasim
