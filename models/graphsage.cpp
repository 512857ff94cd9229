#include "models/graphsage.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_set>

#include "models/ops.h"
#include "models/spec_check.h"
#include "models/split_mix64.h"

namespace stratasim {
namespace {

void Check(const ModelSpec& s, int batch) {
  if (s.fanouts.empty()) FailModel(s, "fanouts", "", "must list at least one hop");
  for (int f : s.fanouts) RequirePositive(s, "fanouts", f);
  RequirePositive(s, "feature_dim", s.feature_dim);
  RequirePositive(s, "hidden", s.hidden);
  RequirePositive(s, "classes", s.classes);
  RequirePositive(s, "graph_vertices", s.graph_vertices);
  if (!(s.graph_degree > 0)) {
    FailModel(s, "graph_degree", std::to_string(s.graph_degree), "must be > 0");
  }
  CheckMicroBatch(s, batch);
  if (batch > s.graph_vertices) {
    throw ConfigError(s.where, "training.micro_batch", std::to_string(batch),
                      "must be <= model.graph_vertices (seed vertices are distinct)");
  }
}

double InputWidth(const ModelSpec& s, int layer) { return layer == 0 ? s.feature_dim : s.hidden; }
double OutputWidth(const ModelSpec& s, int layer) {
  return layer + 1 == static_cast<int>(s.fanouts.size()) ? s.classes : s.hidden;
}

}  // namespace

GraphBatch SampleGraphBatch(const ModelSpec& spec, int batch, std::uint64_t seed, int index) {
  Check(spec, batch);
  SplitMix64 rng(seed ^ (0x6a09e667f3bcc909ULL * (static_cast<std::uint64_t>(index) + 1)));
  const double n = spec.graph_vertices;
  std::unordered_set<std::uint64_t> seen;
  std::vector<std::uint64_t> frontier;
  while (frontier.size() < static_cast<size_t>(batch)) {
    const std::uint64_t v = rng.Below(n);
    if (seen.insert(v).second) frontier.push_back(v);
  }
  GraphBatch b;
  b.vertices.push_back(batch);
  const double degree = std::max(1.0, std::floor(spec.graph_degree));
  for (int fanout : spec.fanouts) {
    const int draws = static_cast<int>(std::min<double>(fanout, degree));
    b.edges.push_back(static_cast<double>(frontier.size()) * draws);
    const size_t before = frontier.size();
    for (size_t i = 0; i < before; ++i) {
      for (int d = 0; d < draws; ++d) {
        const std::uint64_t u = rng.Below(n);
        if (seen.insert(u).second) frontier.push_back(u);
      }
    }
    b.vertices.push_back(static_cast<double>(frontier.size()));
  }
  b.feature_bytes = b.vertices.back() * spec.feature_dim * 4;
  return b;
}

double GraphSageParameterCount(const ModelSpec& spec) {
  double p = 0;
  for (int k = 0; k < static_cast<int>(spec.fanouts.size()); ++k) {
    p += 2 * InputWidth(spec, k) * OutputWidth(spec, k) + OutputWidth(spec, k);
  }
  return p;
}

double GraphSageTrainingFlops(const ModelSpec& spec, const GraphBatch& b) {
  const int hops = static_cast<int>(spec.fanouts.size());
  double flops = 0;
  for (int k = 0; k < hops; ++k) {
    const int hop = hops - k;  // layer 0 consumes the outermost hop
    const double dst = b.vertices[hop - 1], edges = b.edges[hop - 1];
    flops +=
        2 * edges * InputWidth(spec, k) + 12 * dst * InputWidth(spec, k) * OutputWidth(spec, k);
  }
  return flops;
}

Workload BuildGraphSage(const ModelSpec& spec, int micro_batch, DType dtype, std::uint64_t seed,
                        int index) {
  const GraphBatch sample = SampleGraphBatch(spec, micro_batch, seed, index);
  const double e = BytesPerElement(dtype);
  const int hops = static_cast<int>(spec.fanouts.size());
  Workload w;
  w.kind = spec.kind;
  w.dtype = dtype;
  w.micro_batch = micro_batch;
  w.input_bytes = sample.feature_bytes;
  for (int k = 0; k < hops; ++k) {
    const int hop = hops - k;
    const double src = sample.vertices[hop], dst = sample.vertices[hop - 1];
    const double edges = sample.edges[hop - 1];
    const double d_in = InputWidth(spec, k), d_out = OutputWidth(spec, k);
    LayerCost L;
    L.name = "sage" + std::to_string(k);
    L.recomputable = true;
    L.input_bytes = src * d_in * e;
    // Gathers each sampled neighbour's row and averages per destination: one add per value.
    OpCost agg = Elementwise("aggregate", edges * d_in, e, 1, 0);
    agg.forward.bytes += dst * d_in * e;
    agg.forward.flops = edges * d_in;
    agg.backward_input = agg.forward;  // scatter of the gradient back along the same edges
    agg.saved_bytes = src * d_in * e;  // the source features, for the self term's gradient
    L.ops.push_back(agg);
    L.ops.push_back(Linear("combine", dst, 2 * d_in, d_out, e));
    if (k + 1 < hops) {
      OpCost relu = Elementwise("relu", dst * d_out, e, 1, 1);
      relu.saved_bytes = dst * d_out * e;
      L.ops.push_back(relu);
    } else {
      OpCost loss = Elementwise("cross_entropy", dst * d_out, 4, 1, 1);
      loss.saved_bytes = dst * d_out * 4;
      L.ops.push_back(loss);
    }
    L.params = 2 * d_in * d_out + d_out;
    w.layers.push_back(L);
  }
  FinalizeWorkload(w);
  return w;
}

}  // namespace stratasim
