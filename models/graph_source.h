// The graph GraphSAGE's neighbour sampling walks (docs/gnn.md): how many vertices, each one's
// degree and its j-th neighbour. Two sources hold real vertex ids:
//  - a power-law graph generated from the seed and never stored (Chung and Lu 2002, "Connected
//    components in random graphs with given expected degree sequences"): vertex v has weight
//    w_v = ((v + 1/2) / N)^-a with a = 1 / (exponent - 1), its degree is the mean degree scaled
//    by w_v / mean(w), and each of its neighbours is drawn with probability proportional to
//    weight (the Chung-Lu edge probability w_u w_v / sum(w), seen from v), by inverting the
//    weights' CDF at a seeded hash of (v, j). Vertex ids are ranks: degree never grows with the
//    id, so vertex 0 has the highest degree. ogbn-products' size (2.45 M vertices, 62 M edges)
//    costs a few numbers of memory.
//  - a graph read from an edge-list file and held as CSR (models/graph_edge_list.h).
// The uniform graph of core/scenario.h draws every neighbour anew and has no source.
#ifndef STRATASIM_MODELS_GRAPH_SOURCE_H_
#define STRATASIM_MODELS_GRAPH_SOURCE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "core/scenario.h"

namespace stratasim {

class GraphSource {
 public:
  virtual ~GraphSource() = default;
  virtual std::int64_t vertices() const = 0;
  virtual double edges() const = 0;  // sum of the degrees
  virtual std::int64_t Degree(std::int64_t v) const = 0;
  // Neighbour j of v, for j in [0, Degree(v)).
  virtual std::int64_t Neighbor(std::int64_t v, std::int64_t j) const = 0;
  // The `k` vertices of highest degree (ties to the lower id), sorted by id.
  virtual std::vector<std::int64_t> HighestDegree(std::int64_t k) const = 0;
};

class PowerLawGraph : public GraphSource {
 public:
  // Throws ConfigError (at spec.where) unless vertices >= 2, 0 < mean_degree < vertices and
  // exponent > 2.
  PowerLawGraph(const ModelSpec& spec, std::uint64_t seed);
  std::int64_t vertices() const override { return n_; }
  double edges() const override;
  std::int64_t Degree(std::int64_t v) const override;
  std::int64_t Neighbor(std::int64_t v, std::int64_t j) const override;
  std::vector<std::int64_t> HighestDegree(std::int64_t k) const override;

 private:
  std::int64_t n_ = 0;
  double mean_degree_ = 0;
  double a_ = 0;  // 1 / (exponent - 1)
  std::uint64_t seed_ = 0;
};

// The source of spec.graph ("power-law" or "edge-list"; nullptr for "uniform"). Edge-list
// files are read once per path and kept for the process (graphs are read-only).
std::shared_ptr<const GraphSource> GraphOf(const ModelSpec& spec, std::uint64_t seed);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_GRAPH_SOURCE_H_
