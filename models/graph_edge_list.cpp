#include "models/graph_edge_list.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <functional>
#include <numeric>

#include "core/text_number.h"
#include "core/units.h"

namespace stratasim {
namespace {

// Calls visit(src, dst) for each edge of the file; a bad line is a ConfigError at path:line:col.
void ForEachEdge(const std::string& path, const SourceLocation& where,
                 const std::function<void(std::int64_t, std::int64_t)>& visit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(where, "model.graph_file", path, "cannot open the edge-list file");
  std::string line;
  int number = 0;
  auto fail = [&](int column, const std::string& value, const std::string& rule) {
    throw ConfigError(SourceLocation{path, number, column}, "edge", value, rule);
  };
  while (std::getline(in, line)) {
    if (number == INT32_MAX) fail(1, "", "more lines than 2^31 - 1");
    ++number;
    const size_t end = std::min(line.find('#'), line.size());
    long long ids[2] = {0, 0};
    int fields = 0;
    for (size_t i = 0; i < end;) {
      if (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
        ++i;
        continue;
      }
      const size_t start = i;
      while (i < end && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
      const std::string text = line.substr(start, i - start);
      const int column = static_cast<int>(start) + 1;
      if (fields == 2) fail(column, text, "expected two vertex ids 'src dst', found a third field");
      if (!ParseInteger(text, &ids[fields]) || ids[fields] < 0 ||
          ids[fields] > kMaxEdgeListVertexId) {
        fail(column, text,
             "a vertex id must be an integer in [0, " + std::to_string(kMaxEdgeListVertexId) + "]");
      }
      ++fields;
    }
    if (fields == 1) fail(1, line.substr(0, end), "expected two vertex ids 'src dst'");
    if (fields == 2) visit(ids[0], ids[1]);
  }
  if (in.bad()) throw ConfigError(where, "model.graph_file", path, "read error");
}

double PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

}  // namespace

double EdgeListGraph::CsrBytes(double vertices, double lines) {
  return (vertices + 1) * sizeof(std::int64_t) + 2 * lines * sizeof(std::int32_t);
}

EdgeListGraph::EdgeListGraph(const std::string& path, const SourceLocation& where,
                             double max_bytes) {
  // Pass 1: every line checked, nothing stored.
  std::int64_t lines = 0, self_loops = 0, largest = -1;
  ForEachEdge(path, where, [&](std::int64_t s, std::int64_t d) {
    ++lines;
    self_loops += s == d;
    largest = std::max({largest, s, d});
  });
  if (lines == 0) throw ConfigError(where, "model.graph_file", path, "the file has no edges");
  if (max_bytes <= 0) {
    max_bytes = kMaxEdgeListBytes;
    const double physical = PhysicalMemoryBytes();
    if (physical > 0) max_bytes = std::min(max_bytes, physical / 2);
  }
  const double vertices = static_cast<double>(largest) + 1;
  const double bytes = CsrBytes(vertices, static_cast<double>(lines));
  if (bytes > max_bytes) {
    throw ConfigError(where, "model.graph_file", path,
                      "its graph (" + std::to_string(largest + 1) + " vertices, " +
                          std::to_string(lines) + " edges) needs " + FormatBytes(bytes) +
                          " as CSR, more than the bound of " + FormatBytes(max_bytes));
  }
  // Pass 2: degrees; pass 3: neighbour lists. A file changed between passes is refused.
  offsets_.assign(static_cast<size_t>(largest) + 2, 0);
  std::int64_t seen = 0;
  auto check_same = [&](std::int64_t s, std::int64_t d) {
    if (++seen > lines || std::max(s, d) > largest) {
      throw ConfigError(where, "model.graph_file", path, "the file changed while it was read");
    }
  };
  ForEachEdge(path, where, [&](std::int64_t s, std::int64_t d) {
    check_same(s, d);
    ++offsets_[s + 1];
    if (s != d) ++offsets_[d + 1];
  });
  std::partial_sum(offsets_.begin(), offsets_.end(), offsets_.begin());
  neighbors_.assign(static_cast<size_t>(2 * lines - self_loops), 0);
  std::vector<std::int64_t> next(offsets_.begin(), offsets_.end() - 1);
  seen = 0;
  ForEachEdge(path, where, [&](std::int64_t s, std::int64_t d) {
    check_same(s, d);
    neighbors_[next[s]++] = static_cast<std::int32_t>(d);
    if (s != d) neighbors_[next[d]++] = static_cast<std::int32_t>(s);
  });
}

std::vector<std::int64_t> EdgeListGraph::HighestDegree(std::int64_t k) const {
  const std::int64_t n = vertices();
  k = std::clamp<std::int64_t>(k, 0, n);
  std::vector<std::int64_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](std::int64_t a, std::int64_t b) {
    const std::int64_t da = Degree(a), db = Degree(b);
    return da != db ? da > db : a < b;
  });
  ids.resize(static_cast<size_t>(k));
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace stratasim
