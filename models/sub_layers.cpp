#include "models/sub_layers.h"

#include "models/recompute.h"

namespace stratasim {
namespace {

// Index of the first op of the MLP half, or 0 when `L` is not a transformer layer.
size_t MlpStart(const LayerCost& L) {
  for (size_t i = 0; i + 1 < L.ops.size(); ++i) {
    if (L.ops[i].name != "residual1") continue;
    size_t start = i + 1;
    if (L.ops[start].name == "norm1") ++start;  // post-norm (BERT): the attention half's norm
    return start < L.ops.size() ? start : 0;
  }
  return 0;
}

double WeightGradientFlops(const LayerCost& L, size_t first, size_t end) {
  double f = 0;
  for (size_t i = first; i < end; ++i) f += L.ops[i].backward_weight.flops;
  return f;
}

}  // namespace

Workload SplitSubLayers(const Workload& w) {
  Workload out = w;
  out.layers.clear();
  for (const LayerCost& L : w.layers) {
    const size_t mlp = MlpStart(L);
    if (mlp == 0) {
      out.layers.push_back(L);
      continue;
    }
    LayerCost attn = L, rest = L;
    attn.name = L.name + ".attn";
    rest.name = L.name + ".mlp";
    attn.ops.assign(L.ops.begin(), L.ops.begin() + static_cast<long>(mlp));
    rest.ops.assign(L.ops.begin() + static_cast<long>(mlp), L.ops.end());
    // A layer's parameters are its GEMMs' weights (plus biases and norm gains, under 0.1% for
    // these shapes), and a weight of k x n has a weight gradient of 2 tokens k n FLOPs: the
    // halves' weight-gradient FLOPs split the parameters exactly for the weights; biases and
    // gains follow the same proportion.
    const double a = WeightGradientFlops(L, 0, mlp),
                 total = a + WeightGradientFlops(L, mlp, L.ops.size());
    attn.params = total > 0 ? L.params * a / total : L.params / 2;
    rest.params = L.params - attn.params;
    out.layers.push_back(std::move(attn));
    out.layers.push_back(std::move(rest));
  }
  FinalizeWorkload(out);
  out.recompute = Recompute::kNone;
  return out;
}

}  // namespace stratasim
