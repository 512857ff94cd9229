#include "report/gnn_table.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/units.h"
#include "report/aligned_columns.h"

namespace stratasim {
std::string FormatGnnTable(const RunResults& r) {
  std::vector<std::vector<std::string>> rows = {{"strategy", "iteration (ms)", "H2D / iteration",
                                                 "hit rate", "cache / GPU", "peak memory / GPU"}};
  for (const StrategyResult& s : r.strategies) {
    if (!s.ok || !s.gnn) continue;
    const GnnFigures& f = *s.gnn;
    double peak = 0;
    for (double p : s.metrics.peak_memory_bytes) peak = std::max(peak, p);
    rows.push_back({s.name, Num("%.2f", s.metrics.iteration_time_s * 1e3),
                    FormatBytes(f.h2d_bytes_per_iteration), Num("%.1f%%", 100 * f.HitRate()),
                    FormatBytes(f.cache_bytes), FormatBytes(peak)});
  }
  if (rows.size() == 1) return "";
  return "GNN feature transfer (H2D: feature rows copied host-to-device, all GPUs; cache: the "
         "static cache or the kept batches)\n\n" +
         AlignedColumns(rows, 4);
}

std::string GnnFiguresJson(const GnnFigures& f) {
  nlohmann::ordered_json j;
  j["vertices_per_iteration"] = f.vertices_per_iteration;
  j["hits_per_iteration"] = f.hits_per_iteration;
  j["hit_rate"] = f.HitRate();
  j["h2d_bytes_per_iteration"] = f.h2d_bytes_per_iteration;
  j["cache_bytes"] = f.cache_bytes;
  return j.dump();
}

}  // namespace stratasim
