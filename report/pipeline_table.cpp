#include "report/pipeline_table.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "report/aligned_columns.h"

namespace stratasim {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
// More stages than this show their peak memory as a range, to keep rows readable.
constexpr size_t kListedStages = 8;

std::string MemoryPerStage(const std::vector<double>& bytes) {
  if (bytes.empty()) return "-";
  if (bytes.size() > kListedStages) {
    const auto [lo, hi] = std::minmax_element(bytes.begin(), bytes.end());
    return Num("%.1f", *lo / kGiB) + "-" + Num("%.1f", *hi / kGiB);
  }
  std::string out;
  for (double b : bytes) out += (out.empty() ? "" : "/") + Num("%.1f", b / kGiB);
  return out;
}

}  // namespace

StageSummary SummarizeStages(const Metrics& m) {
  StageSummary s;
  for (double t : m.stage_compute_s) {
    s.max_stage_compute_s = std::max(s.max_stage_compute_s, t);
    s.mean_stage_compute_s += t / static_cast<double>(m.stage_compute_s.size());
  }
  for (double b : m.stage_bubble_fraction) {
    s.bubble_fraction += b / static_cast<double>(m.stage_bubble_fraction.size());
  }
  return s;
}

std::string FormatPipelineTable(const RunResults& r) {
  bool all_layers = true;
  for (const StrategyResult& s : r.strategies) {
    if (s.ok && s.pipeline) all_layers = all_layers && s.pipeline->partition_unit == "layers";
  }
  std::vector<std::vector<std::string>> rows = {
      {"strategy", "planner", all_layers ? "partition (layers)" : "partition", "max stage (ms)",
       "mean stage (ms)", "start-up (ms)", "bubble", "peak mem/stage (GiB)", "planning (ms)",
       "predicted / simulated (ms)"}};
  for (const StrategyResult& s : r.strategies) {
    if (!s.ok || !s.pipeline) continue;
    const PipelineFigures& p = *s.pipeline;
    const StageSummary st = SummarizeStages(s.metrics);
    const bool manual = p.planner == "manual";
    rows.push_back(
        {s.name, p.planner, all_layers ? p.partition : p.partition + " " + p.partition_unit,
         Num("%.2f", st.max_stage_compute_s * 1e3), Num("%.2f", st.mean_stage_compute_s * 1e3),
         Num("%.2f", s.metrics.startup_s * 1e3), Num("%.1f%%", st.bubble_fraction * 100),
         MemoryPerStage(s.peak_memory_per_stage_bytes),
         manual ? std::string("-") : Num("%.1f", p.planning_s * 1e3),
         p.predicted_iteration_s > 0 ? Num("%.2f", p.predicted_iteration_s * 1e3) + " / " +
                                           Num("%.2f", s.metrics.iteration_time_s * 1e3)
                                     : std::string("-")});
  }
  if (rows.size() == 1) return "";
  std::string out =
      "Pipeline (per measured iteration; stage: compute time of its busiest GPU; start-up: first "
      "forward to the last stage's first forward; bubble: share of the iteration a stage's "
      "compute is idle, mean over stages)\n\n";
  out += AlignedColumns(rows, 3);
  return out;
}

}  // namespace stratasim
