#include "models/graph_source.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numeric>
#include <string>

#include "models/graph_edge_list.h"
#include "models/spec_check.h"
#include "models/split_mix64.h"

namespace stratasim {

PowerLawGraph::PowerLawGraph(const ModelSpec& spec, std::uint64_t seed)
    : n_(static_cast<std::int64_t>(spec.graph_vertices)),
      mean_degree_(spec.graph_degree),
      a_(1 / (spec.graph_exponent - 1)),
      // Its own stream, apart from the sampler's (models/graphsage.cpp), so that the graph does
      // not change with the mini-batch index.
      seed_(seed ^ 0x3c6ef372fe94f82bULL) {
  if (n_ < 2) FailModel(spec, "graph_vertices", std::to_string(n_), "must be >= 2");
  if (!(mean_degree_ > 0) || mean_degree_ >= static_cast<double>(n_)) {
    FailModel(spec, "graph_degree", std::to_string(mean_degree_),
              "must be > 0 and below graph_vertices");
  }
  if (!(spec.graph_exponent > 2)) {
    FailModel(spec, "graph_exponent", std::to_string(spec.graph_exponent), "must be > 2");
  }
}

std::int64_t PowerLawGraph::Degree(std::int64_t v) const {
  // E[w] over u uniform in (0, 1] of u^-a is 1 / (1 - a): scaling by (1 - a) keeps the mean
  // degree mean_degree_ (up to the rounding and the clamps).
  const double w = std::pow((static_cast<double>(v) + 0.5) / static_cast<double>(n_), -a_);
  const double d = std::round(mean_degree_ * (1 - a_) * w);
  return static_cast<std::int64_t>(std::clamp(d, 1.0, static_cast<double>(n_ - 1)));
}

double PowerLawGraph::edges() const {
  double sum = 0;
  for (std::int64_t v = 0; v < n_; ++v) sum += static_cast<double>(Degree(v));
  return sum;
}

std::int64_t PowerLawGraph::Neighbor(std::int64_t v, std::int64_t j) const {
  SplitMix64 h(seed_ ^ (static_cast<std::uint64_t>(v) * 0x9e3779b97f4a7c15ULL) ^
               (static_cast<std::uint64_t>(j) * 0xc2b2ae3d27d4eb4fULL));
  h.Next();  // one round apart from the raw key, so that near keys give unrelated draws
  // u in (0, 1]; x = u^(1 / (1 - a)) has density (1 - a) x^-a on (0, 1]: the weights' shape.
  const double u = (static_cast<double>(h.Next() >> 11) + 1) * 0x1.0p-53;
  const double x = std::pow(u, 1 / (1 - a_));
  const auto id = static_cast<std::int64_t>(x * static_cast<double>(n_));
  return std::min(id, n_ - 1);
}

std::vector<std::int64_t> PowerLawGraph::HighestDegree(std::int64_t k) const {
  std::vector<std::int64_t> ids(static_cast<size_t>(std::clamp<std::int64_t>(k, 0, n_)));
  std::iota(ids.begin(), ids.end(), 0);  // ids are degree ranks
  return ids;
}

std::shared_ptr<const GraphSource> GraphOf(const ModelSpec& spec, std::uint64_t seed) {
  if (spec.graph == "power-law") return std::make_shared<PowerLawGraph>(spec, seed);
  if (spec.graph != "edge-list") return nullptr;
  // Planners run on their own threads (strategies/iteration_feed.h): one lock over the cache.
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const GraphSource>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded.find(spec.graph_file);
  if (it != loaded.end()) return it->second;
  auto graph = std::make_shared<EdgeListGraph>(spec.graph_file, spec.graph_file_where);
  loaded.emplace(spec.graph_file, graph);
  return graph;
}

}  // namespace stratasim
