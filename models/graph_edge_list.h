// A graph read from an edge-list file (docs/gnn.md): one edge "src dst" per line, vertex ids
// integers in [0, kMaxEdgeListVertexId], '#' starts a comment, blank lines are skipped. Edges
// are undirected (as ogbn's are): each line adds dst to src's neighbours and src to dst's (a
// self-loop once); repeated lines stay repeated. The vertex count is the largest id + 1.
//
// The file is read three times: first to check every line and count edges and the largest id
// (no memory grows with the file), then, once the CSR's size is known and within the bound, to
// count degrees and to fill the neighbour lists. A graph whose CSR would not fit is refused
// with its size, never half-built.
#ifndef STRATASIM_MODELS_GRAPH_EDGE_LIST_H_
#define STRATASIM_MODELS_GRAPH_EDGE_LIST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "models/graph_source.h"

namespace stratasim {

// 32-bit neighbour ids: 2^31 - 2 keeps the vertex count an int32 too.
inline constexpr std::int64_t kMaxEdgeListVertexId = (std::int64_t{1} << 31) - 2;
// The CSR's default bound: 16 GiB (ogbn-papers100M's 1.6 G edges take 13 GiB), and at most half
// the machine's memory.
inline constexpr double kMaxEdgeListBytes = 16.0 * (1ull << 30);

class EdgeListGraph : public GraphSource {
 public:
  // Reads `path`; `where` locates the file's name in the scenario for errors about the file
  // as a whole (cannot open it, too large, no edges); a bad line is located at path:line:col.
  // `max_bytes`: the CSR's bound (0: kMaxEdgeListBytes and half the physical memory).
  EdgeListGraph(const std::string& path, const SourceLocation& where, double max_bytes = 0);

  std::int64_t vertices() const override { return static_cast<std::int64_t>(offsets_.size()) - 1; }
  double edges() const override { return static_cast<double>(neighbors_.size()); }
  std::int64_t Degree(std::int64_t v) const override { return offsets_[v + 1] - offsets_[v]; }
  std::int64_t Neighbor(std::int64_t v, std::int64_t j) const override {
    return neighbors_[offsets_[v] + j];
  }
  std::vector<std::int64_t> HighestDegree(std::int64_t k) const override;

  // Bytes the CSR of `vertices` vertices and `lines` edges takes (offsets and both directions).
  static double CsrBytes(double vertices, double lines);

 private:
  std::vector<std::int64_t> offsets_;  // vertices + 1
  std::vector<std::int32_t> neighbors_;
};

}  // namespace stratasim

#endif  // STRATASIM_MODELS_GRAPH_EDGE_LIST_H_
