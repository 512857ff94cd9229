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

}  // namespace

MoeSummary SummarizeMoe(const Measured& measured, int num_ranks, int measured_iterations,
                        const MoeFigures& figures) {
  const std::vector<double>& end = measured.iteration_end_s;
  const int last = static_cast<int>(end.size()) - 1;
  const int warmup = last + 1 - measured_iterations;
  if (measured_iterations < 1 || warmup < 0) {
    throw Error("MoE summary: needs at least one measured iteration");
  }
  MoeSummary m;
  m.top_k = figures.top_k;
  for (int i = warmup; i <= last; ++i) {
    m.iteration_s.push_back(end[static_cast<size_t>(i)] -
                            (i > 0 ? end[static_cast<size_t>(i) - 1] : 0));
  }
  std::vector<double> sorted = m.iteration_s;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double v : sorted) sum += v;
  m.mean_s = sum / sorted.size();
  m.p50_s = Percentile(sorted, 50);
  m.p95_s = Percentile(sorted, 95);
  m.min_s = sorted.front();
  m.max_s = sorted.back();
  m.tokens_per_s = m.mean_s > 0 ? figures.tokens_per_iteration / m.mean_s : 0;

  // Tracked categories count from a task's start: waiting for the most loaded GPU, the
  // imbalance, is part of the all-to-all's cost.
  auto tracked = [&](const char* category) {
    auto it = measured.tracked.find(category);
    return it == measured.tracked.end() ? CategoryTime{} : it->second;
  };
  const double per = num_ranks > 0 ? 1.0 / (num_ranks * measured_iterations) : 0;
  m.exposed_a2a_s = tracked("a2a").exposed_s * per;
  m.placement_s = tracked("placement").covered_s * per;
  m.placement_exposed_s = tracked("placement").exposed_s * per;

  m.load_std_before = figures.load_std_before;
  m.load_std_after = figures.load_std_after;
  if (m.load_std_after > 0) {
    m.load_balance_ratio = m.load_std_before / m.load_std_after;
  } else {
    m.load_balance_ratio = m.load_std_before > 0 ? INFINITY : 1;
  }
  for (double b : measured.metrics.peak_memory_bytes) {
    m.peak_memory_bytes = std::max(m.peak_memory_bytes, b);
  }
  m.dropped_tokens = figures.dropped_tokens;
  m.replicas = figures.replicas;
  m.transfer_bytes = figures.transfer_bytes;
  m.placement_changes = figures.placement_changes;
  m.placement_kept_fraction = figures.placement_kept_fraction;
  m.transfer_bytes_saved = figures.transfer_bytes_saved;
  m.expert_parallel = figures.expert_parallel;
  m.expert_data_parallel = figures.expert_data_parallel;
  m.gpu_tokens_per_iteration = figures.gpu_tokens_per_iteration;
  return m;
}

MoeSummary SummarizeMoe(const TaskGraph& g, const ExecutionTrace& t, int warmup, int measured,
                        const MoeFigures& figures, const Metrics& metrics) {
  if (t.records.size() != g.tasks().size()) {
    throw Error("MoE summary: the trace does not cover the graph");
  }
  if (measured < 1) throw Error("MoE summary: needs at least one measured iteration");
  MetricsInput in;
  in.warmup_iterations = warmup;
  in.measured_iterations = measured;
  TraceMeter meter(g.num_ranks(), in, kMoeTrackedCategories, g.fold());
  for (const Task& task : g.tasks()) meter.Add(task, t.records[static_cast<size_t>(task.id)]);
  Measured m = meter.Finish(g.fold());
  m.metrics = metrics;
  return SummarizeMoe(m, g.num_ranks(), measured, figures);
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
  j["placement_changes"] = m.placement_changes;
  j["placement_kept_fraction"] = m.placement_kept_fraction;
  j["transfer_bytes_saved"] = m.transfer_bytes_saved;
  j["expert_parallel"] = m.expert_parallel;
  j["expert_data_parallel"] = m.expert_data_parallel;
  // Null when not recorded (more than kMaxMoeLoadSeriesGpus GPUs): an empty list would read
  // as "no iterations".
  j["gpu_tokens_per_iteration"] = m.gpu_tokens_per_iteration.empty()
                                      ? nlohmann::ordered_json(nullptr)
                                      : nlohmann::ordered_json(m.gpu_tokens_per_iteration);
  return j.dump();
}

}  // namespace stratasim
