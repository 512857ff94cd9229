#include "models/graphsage.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <unordered_set>

#include "models/graph_source.h"
#include "models/ops.h"
#include "models/spec_check.h"
#include "models/split_mix64.h"

namespace stratasim {
namespace {

void CheckLayers(const ModelSpec& s, int batch) {
  if (s.fanouts.empty()) FailModel(s, "fanouts", "", "must list at least one hop");
  for (int f : s.fanouts) RequirePositive(s, "fanouts", f);
  RequirePositive(s, "feature_dim", s.feature_dim);
  RequirePositive(s, "hidden", s.hidden);
  RequirePositive(s, "classes", s.classes);
  CheckMicroBatch(s, batch);
}

void Check(const ModelSpec& s, int batch) {
  CheckLayers(s, batch);
  RequirePositive(s, "graph_vertices", s.graph_vertices);
  if (!(s.graph_degree > 0)) {
    FailModel(s, "graph_degree", std::to_string(s.graph_degree), "must be > 0");
  }
  if (batch > s.graph_vertices) {
    throw ConfigError(s.where, "training.micro_batch", std::to_string(batch),
                      "must be <= model.graph_vertices (seed vertices are distinct)");
  }
}

// 2^30 bits = 128 MiB at most for the bitmap of seen vertices.
constexpr std::int64_t kDenseSeenVertices = std::int64_t{1} << 30;

// Sampling over a graph with real neighbour lists (models/graph_source.h).
GraphBatch SampleFromSource(const ModelSpec& spec, const GraphSource& graph, int batch,
                            SplitMix64& rng) {
  const double n = static_cast<double>(graph.vertices());
  if (batch > n) {
    throw ConfigError(spec.where, "training.micro_batch", std::to_string(batch),
                      "must be <= the graph's " + std::to_string(graph.vertices()) +
                          " vertices (seed vertices are distinct)");
  }
  // Which vertices the batch has: a bitmap over the graph's vertices while that is small
  // (ogbn-products: 300 KiB, many times faster than hashing a million draws), else a hash set.
  const bool dense = graph.vertices() <= kDenseSeenVertices;
  std::vector<bool> seen_bits(dense ? static_cast<size_t>(graph.vertices()) : 0);
  std::unordered_set<std::int64_t> seen_set;
  auto insert = [&](std::int64_t v) {
    if (!dense) return seen_set.insert(v).second;
    if (seen_bits[static_cast<size_t>(v)]) return false;
    seen_bits[static_cast<size_t>(v)] = true;
    return true;
  };
  GraphBatch b;
  std::vector<std::int64_t>& ids = b.ids;
  while (ids.size() < static_cast<size_t>(batch)) {
    const auto v = static_cast<std::int64_t>(rng.Below(n));
    if (insert(v)) ids.push_back(v);
  }
  b.vertices.push_back(batch);
  std::vector<std::int64_t> picked;
  for (int fanout : spec.fanouts) {
    double edges = 0;
    const size_t before = ids.size();
    for (size_t i = 0; i < before; ++i) {
      const std::int64_t v = ids[i];
      const std::int64_t degree = graph.Degree(v);
      picked.clear();
      if (degree <= fanout) {
        for (std::int64_t j = 0; j < degree; ++j) picked.push_back(j);
      } else {
        // `fanout` distinct neighbour slots of `degree` (fanout < degree): rejection over the
        // few already taken.
        while (picked.size() < static_cast<size_t>(fanout)) {
          const auto j = static_cast<std::int64_t>(rng.Below(static_cast<double>(degree)));
          if (std::find(picked.begin(), picked.end(), j) == picked.end()) picked.push_back(j);
        }
      }
      edges += static_cast<double>(picked.size());
      for (std::int64_t j : picked) {
        const std::int64_t u = graph.Neighbor(v, j);
        if (insert(u)) ids.push_back(u);
      }
    }
    b.edges.push_back(edges);
    b.vertices.push_back(static_cast<double>(ids.size()));
  }
  b.feature_bytes = b.vertices.back() * spec.feature_dim * 4;
  return b;
}

double InputWidth(const ModelSpec& s, int layer) { return layer == 0 ? s.feature_dim : s.hidden; }
double OutputWidth(const ModelSpec& s, int layer) {
  return layer + 1 == static_cast<int>(s.fanouts.size()) ? s.classes : s.hidden;
}

}  // namespace

GraphBatch SampleGraphBatch(const ModelSpec& spec, int batch, std::uint64_t seed, int index) {
  SplitMix64 rng(seed ^ (0x6a09e667f3bcc909ULL * (static_cast<std::uint64_t>(index) + 1)));
  if (spec.graph != "uniform") {
    CheckLayers(spec, batch);
    const std::shared_ptr<const GraphSource> graph = GraphOf(spec, seed);
    if (!graph)
      FailModel(spec, "graph", spec.graph, "must be one of: uniform, power-law, edge-list");
    return SampleFromSource(spec, *graph, batch, rng);
  }
  Check(spec, batch);
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
  b.ids.assign(frontier.begin(), frontier.end());
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
  return GraphSageWorkload(spec, SampleGraphBatch(spec, micro_batch, seed, index), dtype);
}

Workload GraphSageWorkload(const ModelSpec& spec, const GraphBatch& sample, DType dtype) {
  const double e = BytesPerElement(dtype);
  const int hops = static_cast<int>(spec.fanouts.size());
  Workload w;
  w.kind = spec.kind;
  w.dtype = dtype;
  w.micro_batch = static_cast<int>(sample.vertices[0]);
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
