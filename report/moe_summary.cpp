#include "report/moe_summary.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/error.h"
#include "core/intervals.h"

namespace stratasim {
namespace {

// Nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double p) {
  const size_t rank = static_cast<size_t>(std::ceil(p / 100 * sorted.size()));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

double Figure(const std::map<std::string, double>& f, const std::string& key) {
  auto it = f.find(key);
  return it == f.end() ? 0 : it->second;
}

}  // namespace

bool HasMoeFigures(const std::map<std::string, double>& figures) {
  return figures.count("moe.top_k") > 0;
}

MoeSummary SummarizeMoe(const TaskGraph& g, const ExecutionTrace& t, int warmup, int measured,
                        const std::map<std::string, double>& figures, const Metrics& metrics) {
  if (t.records.size() != g.tasks().size()) {
    throw Error("MoE summary: the trace does not cover the graph");
  }
  if (measured < 1) throw Error("MoE summary: needs at least one measured iteration");
  const int last = warmup + measured - 1;
  std::vector<double> end(last + 1, 0);
  for (const Task& task : g.tasks()) {
    if (task.iteration <= last) {
      end[task.iteration] = std::max(end[task.iteration], t.records[task.id].end_s);
    }
  }
  MoeSummary m;
  m.top_k = static_cast<int>(Figure(figures, "moe.top_k"));
  for (int i = warmup; i <= last; ++i) m.iteration_s.push_back(end[i] - (i > 0 ? end[i - 1] : 0));
  std::vector<double> sorted = m.iteration_s;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double v : sorted) sum += v;
  m.mean_s = sum / sorted.size();
  m.p50_s = Percentile(sorted, 50);
  m.p95_s = Percentile(sorted, 95);
  m.min_s = sorted.front();
  m.max_s = sorted.back();
  m.tokens_per_s = m.mean_s > 0 ? Figure(figures, "moe.tokens_per_iteration") / m.mean_s : 0;

  const int n = g.num_ranks();
  const double lo = warmup > 0 ? end[warmup - 1] : 0, hi = end[last];
  std::vector<std::vector<Interval>> compute(n), a2a(n), placement(n);
  for (const Task& task : g.tasks()) {
    const TraceRecord& r = t.records[task.id];
    if (task.kind == TaskKind::kCompute) {
      compute[task.rank].push_back({r.start_s, r.end_s});
    } else if (task.category == "a2a") {
      a2a[task.rank].push_back({r.start_s, r.end_s});
    } else if (task.category == "placement") {
      placement[task.rank].push_back({r.start_s, r.end_s});
    }
  }
  double exposed = 0, moved = 0, moved_exposed = 0;
  for (int r = 0; r < n; ++r) {
    const std::vector<Interval> busy = Union(compute[r]);
    const std::vector<Interval> p = Union(placement[r]);
    exposed += ExclusiveLength(Union(a2a[r]), busy, lo, hi);
    moved += CoveredLength(p, lo, hi);
    moved_exposed += ExclusiveLength(p, busy, lo, hi);
  }
  const double per = n > 0 ? 1.0 / (n * measured) : 0;
  m.exposed_a2a_s = exposed * per;
  m.placement_s = moved * per;
  m.placement_exposed_s = moved_exposed * per;

  m.load_std_before = Figure(figures, "moe.load_std_before");
  m.load_std_after = Figure(figures, "moe.load_std_after");
  if (m.load_std_after > 0) {
    m.load_balance_ratio = m.load_std_before / m.load_std_after;
  } else {
    m.load_balance_ratio = m.load_std_before > 0 ? INFINITY : 1;
  }
  for (double b : metrics.peak_memory_bytes) m.peak_memory_bytes = std::max(m.peak_memory_bytes, b);
  m.dropped_tokens = Figure(figures, "moe.dropped_tokens");
  m.replicas = Figure(figures, "moe.replicas");
  m.transfer_bytes = Figure(figures, "moe.transfer_bytes");
  return m;
}

std::string MoeSummaryJson(const MoeSummary& m) {
  nlohmann::ordered_json j;
  j["top_k"] = m.top_k;
  j["iteration_time_s"] = {{"mean", m.mean_s}, {"p50", m.p50_s}, {"p95", m.p95_s},
                           {"min", m.min_s},   {"max", m.max_s}, {"each", m.iteration_s}};
  j["tokens_per_s"] = m.tokens_per_s;
  j["baseline"] =
      m.baseline.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(m.baseline);
  j["speedup"] = m.speedup > 0 ? nlohmann::ordered_json(m.speedup) : nullptr;
  j["load_std_before"] = m.load_std_before;
  j["load_std_after"] = m.load_std_after;
  j["load_balance_ratio"] =
      std::isfinite(m.load_balance_ratio) ? nlohmann::ordered_json(m.load_balance_ratio) : nullptr;
  j["exposed_a2a_s"] = m.exposed_a2a_s;
  j["placement_s"] = m.placement_s;
  j["placement_exposed_s"] = m.placement_exposed_s;
  j["peak_memory_bytes"] = m.peak_memory_bytes;
  j["dropped_tokens"] = m.dropped_tokens;
  j["replicas"] = m.replicas;
  j["transfer_bytes"] = m.transfer_bytes;
  return j.dump();
}

}  // namespace stratasim
