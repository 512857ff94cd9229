#include "report/results_json.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "report/csv_fields.h"
#include "report/gnn_table.h"
#include "report/pipeline_table.h"

namespace stratasim {
namespace {

// ordered_json keeps keys in insertion order: the order below is the documented one, and
// readers diffing two results files see fields in the same place.
using Json = nlohmann::ordered_json;

constexpr int kFormatVersion = 1;

double MaxPeakMemoryBytes(const Metrics& m) {
  double peak = 0;
  for (double b : m.peak_memory_bytes) peak = std::max(peak, b);
  return peak;
}

// The "pipeline" member: the plan's choices and the stages' measured figures.
Json PipelineToJson(const StrategyResult& s) {
  const PipelineFigures& p = *s.pipeline;
  const Metrics& m = s.metrics;
  const StageSummary st = SummarizeStages(m);
  Json j;
  j["planner"] = p.planner;
  j["partition"] = p.partition;
  j["partition_unit"] = p.partition_unit;
  j["stages"] = p.stages;
  j["stage_compute_s"] = m.stage_compute_s;
  j["max_stage_compute_s"] = st.max_stage_compute_s;
  j["mean_stage_compute_s"] = st.mean_stage_compute_s;
  j["startup_s"] = m.startup_s;
  j["stage_bubble_fraction"] = m.stage_bubble_fraction;
  j["bubble_fraction"] = st.bubble_fraction;
  j["predicted_stage_s"] = p.predicted_stage_s;
  j["predicted_iteration_s"] =
      p.predicted_iteration_s > 0 ? Json(p.predicted_iteration_s) : Json(nullptr);
  return j;
}

Json StrategyToJson(const StrategyResult& s) {
  Json j;
  j["name"] = s.name;
  j["kind"] = s.kind;
  j["ok"] = s.ok;
  if (!s.ok) j["error"] = s.error;
  j["num_gpus"] = s.num_gpus;
  const Metrics& m = s.metrics;
  // A failed strategy's figures are whatever was left in Metrics; null keeps them out of
  // averages and plots in the tools that read this file.
  auto figure = [&](double v) { return s.ok ? Json(v) : Json(nullptr); };
  j["iteration_time_s"] = figure(m.iteration_time_s);
  j["samples_per_s"] = figure(m.samples_per_s);
  j["tokens_per_s"] = figure(m.tokens_per_s);
  j["model_flops_per_iteration"] = figure(m.model_flops_per_iteration);
  j["tflops_per_gpu"] = figure(m.tflops_per_gpu);
  j["mfu"] = figure(m.mfu);
  j["hfu"] = figure(m.hfu);
  j["exposed_comm_fraction"] = figure(m.exposed_comm_fraction);
  j["exposed_comm_by_category"] = s.ok ? Json(m.exposed_comm_by_category) : Json::object();
  j["idle_fraction"] = figure(m.idle_fraction);
  j["peak_memory_bytes"] = s.ok ? Json(m.peak_memory_bytes) : Json::array();
  j["max_peak_memory_bytes"] = figure(MaxPeakMemoryBytes(m));
  j["oom_ranks"] = s.ok ? Json(m.oom_ranks) : Json::array();
  j["peak_memory_per_stage_bytes"] = s.ok ? Json(s.peak_memory_per_stage_bytes) : Json::array();
  if (s.ok && s.moe) j["moe"] = Json::parse(MoeSummaryJson(*s.moe));
  if (s.ok && s.pipeline) j["pipeline"] = PipelineToJson(s);
  if (s.ok && s.gnn) j["gnn"] = Json::parse(GnnFiguresJson(*s.gnn));
  j["fold"] = s.fold;
  j["simulation"] = {{"tasks", s.tasks},
                     {"activities", s.activities},
                     {"instants", s.instants},
                     {"fused_tasks", s.fused_tasks}};
  j["notes"] = s.notes;
  // Last, as keys are only appended: each rank's GPU memory, for the HTML report's memory chart.
  j["gpu_memory_capacity_bytes"] = s.ok ? Json(m.memory_capacity_bytes) : Json::array();
  return j;
}

}  // namespace

std::string ResultsToJson(const RunResults& r) {
  Json j;
  j["format"] = "stratasim-results";
  j["version"] = kFormatVersion;
  j["tool_version"] = r.tool_version;
  Json scenario;
  scenario["name"] = r.scenario_name;
  scenario["file"] = r.scenario_file;
  scenario["seed"] = r.seed;
  scenario["gpus"] = r.gpu_summary;
  scenario["model"] = r.model_summary;
  j["scenario"] = std::move(scenario);
  Json strategies = Json::array();
  for (const StrategyResult& s : r.strategies) strategies.push_back(StrategyToJson(s));
  j["strategies"] = std::move(strategies);
  // Invalid UTF-8 in a name or an error message (e.g. copied from a system message) must not
  // make the whole report fail; it is replaced with U+FFFD.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

namespace {

// The pipeline columns, appended after `error` (columns are only ever appended, so that a
// reader by position keeps working); empty cells for other and failed strategies.
std::string PipelineCsv(const StrategyResult& s) {
  if (!s.ok || !s.pipeline) return ",,,,,,,";
  const PipelineFigures& p = *s.pipeline;
  const StageSummary st = SummarizeStages(s.metrics);
  return CsvField(p.planner) + "," + CsvField(p.partition) + "," + std::to_string(p.stages) + "," +
         CsvNumber(st.max_stage_compute_s) + "," + CsvNumber(st.mean_stage_compute_s) + "," +
         CsvNumber(s.metrics.startup_s) + "," + CsvNumber(st.bubble_fraction) + "," +
         (p.predicted_iteration_s > 0 ? CsvNumber(p.predicted_iteration_s) : std::string());
}

}  // namespace

// The scalar members of a strategy's "moe" object, named as json_normalize names them; empty
// for strategies without one (and for failed ones). A null of results.json (no baseline, a
// perfectly balanced ratio) is an empty cell.
constexpr const char* kMoeCsvHeader =
    "moe.top_k,moe.iteration_time_s.mean,moe.iteration_time_s.p50,moe.iteration_time_s.p95,"
    "moe.iteration_time_s.min,moe.iteration_time_s.max,moe.tokens_per_s,moe.baseline,"
    "moe.speedup,moe.load_std_before,moe.load_std_after,moe.load_balance_ratio,"
    "moe.exposed_a2a_s,moe.placement_s,moe.placement_exposed_s,moe.peak_memory_bytes,"
    "moe.dropped_tokens,moe.replicas,moe.transfer_bytes,moe.placement_changes,"
    "moe.placement_kept_fraction,moe.transfer_bytes_saved,moe.expert_parallel,"
    "moe.expert_data_parallel";

constexpr int kMoeCsvColumns = 24;

std::string MoeCsv(const StrategyResult& s) {
  if (!s.ok || !s.moe) return std::string(kMoeCsvColumns - 1, ',');
  const MoeSummary& m = *s.moe;
  auto finite = [](double v) { return std::isfinite(v) ? CsvNumber(v) : std::string(); };
  return std::to_string(m.top_k) + "," + CsvNumber(m.mean_s) + "," + CsvNumber(m.p50_s) + "," +
         CsvNumber(m.p95_s) + "," + CsvNumber(m.min_s) + "," + CsvNumber(m.max_s) + "," +
         CsvNumber(m.tokens_per_s) + "," + CsvField(m.baseline) + "," +
         (m.speedup > 0 ? CsvNumber(m.speedup) : std::string()) + "," +
         CsvNumber(m.load_std_before) + "," + CsvNumber(m.load_std_after) + "," +
         finite(m.load_balance_ratio) + "," + CsvNumber(m.exposed_a2a_s) + "," +
         CsvNumber(m.placement_s) + "," + CsvNumber(m.placement_exposed_s) + "," +
         CsvBytes(m.peak_memory_bytes) + "," + CsvNumber(m.dropped_tokens) + "," +
         CsvNumber(m.replicas) + "," + CsvBytes(m.transfer_bytes) + "," +
         CsvNumber(m.placement_changes) + "," + CsvNumber(m.placement_kept_fraction) + "," +
         CsvNumber(m.transfer_bytes_saved) + "," + std::to_string(m.expert_parallel) + "," +
         std::to_string(m.expert_data_parallel);
}

std::string ResultsToCsv(const RunResults& r) {
  std::string out =
      "name,kind,ok,num_gpus,iteration_time_s,samples_per_s,tokens_per_s,tflops_per_gpu,mfu,"
      "hfu,exposed_comm_fraction,idle_fraction,max_peak_memory_bytes,fold,error,"
      "pipeline.planner,pipeline.partition,pipeline.stages,pipeline.max_stage_compute_s,"
      "pipeline.mean_stage_compute_s,pipeline.startup_s,pipeline.bubble_fraction,"
      "pipeline.predicted_iteration_s," +
      std::string(kMoeCsvHeader) + "\n";
  for (const StrategyResult& s : r.strategies) {
    const Metrics& m = s.metrics;
    auto figure = [&](double v) { return s.ok ? CsvNumber(v) : std::string(); };
    std::string max_peak = s.ok ? CsvBytes(MaxPeakMemoryBytes(m)) : std::string();
    out += CsvField(s.name) + "," + CsvField(s.kind) + "," + (s.ok ? "true" : "false") + "," +
           std::to_string(s.num_gpus) + "," + figure(m.iteration_time_s) + "," +
           figure(m.samples_per_s) + "," + figure(m.tokens_per_s) + "," + figure(m.tflops_per_gpu) +
           "," + figure(m.mfu) + "," + figure(m.hfu) + "," + figure(m.exposed_comm_fraction) + "," +
           figure(m.idle_fraction) + "," + max_peak + "," + CsvField(s.fold) + "," +
           (s.ok ? std::string() : CsvField(s.error)) + "," + PipelineCsv(s) + "," + MoeCsv(s) +
           "\n";
  }
  return out;
}

}  // namespace stratasim
