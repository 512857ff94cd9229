#include "models/sub_layers.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace stratasim {
namespace {

// The index of the op named `name` in L, or L.ops.size().
size_t Find(const LayerCost& L, const std::string& name) {
  for (size_t i = 0; i < L.ops.size(); ++i) {
    if (L.ops[i].name == name) return i;
  }
  return L.ops.size();
}

// Elements of the weight matrices of L.ops[first, end): K x N (x the batch of a grouped expert
// GEMM) of every op with a weight gradient.
double WeightElements(const LayerCost& L, size_t first, size_t end) {
  double n = 0;
  for (size_t i = first; i < end; ++i) {
    const OpCost& op = L.ops[i];
    if (op.backward_weight.empty() || !op.forward.gemm.known()) continue;
    n += op.forward.gemm.k * op.forward.gemm.n * op.forward.gemm.batch;
  }
  return n;
}

LayerCost Half(const LayerCost& L, const std::string& suffix, size_t first, size_t end,
               double params) {
  LayerCost half;
  half.name = L.name + suffix;
  half.ops.assign(L.ops.begin() + static_cast<std::ptrdiff_t>(first),
                  L.ops.begin() + static_cast<std::ptrdiff_t>(end));
  half.params = params;
  // The MLP half's input (the attention half's output) has the layer input's shape.
  half.input_bytes = L.input_bytes;
  half.recomputable = true;
  return half;
}

}  // namespace

Workload SplitSubLayers(const Workload& w) {
  Workload out = w;
  out.layers.clear();
  for (const LayerCost& L : w.layers) {
    const size_t n = L.ops.size(), qkv = Find(L, "qkv"), r2 = Find(L, "residual2");
    if (qkv == n || r2 == n) {
      out.layers.push_back(L);
      continue;
    }
    const size_t r1 = Find(L, "residual1");
    if (r1 == n || r1 < qkv || r1 > r2) {
      throw Error("SplitSubLayers: layer " + L.name +
                  " has ops qkv and residual2 but no residual1 between them, so its attention "
                  "and MLP halves are unknown");
    }
    size_t cut = r1 + 1;
    if (cut < n && L.ops[cut].name == "norm1") ++cut;  // post-norm (BERT): ends the attention half
    // Parameters in proportion to the weight matrices' elements, which is exact for the linear
    // weights and, for a dense layer, the proportion of the halves' weight-gradient FLOPs
    // (2 x tokens x K x N each; MoE's grouped expert GEMMs run capacity x experts rows instead,
    // so their FLOPs would not count their weights). Biases and norm gains (< 0.1% of a layer)
    // follow the same proportion.
    const double attn_w = WeightElements(L, 0, cut), all_w = attn_w + WeightElements(L, cut, n);
    const double attn_params = all_w > 0 ? L.params * attn_w / all_w : L.params / 2;
    out.layers.push_back(Half(L, ".attn", 0, cut, attn_params));
    out.layers.push_back(Half(L, ".mlp", cut, n, L.params - attn_params));
  }
  FinalizeWorkload(out);
  return out;
}

}  // namespace stratasim
