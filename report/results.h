// What a run of one scenario produced, strategy by strategy: the input of every report.
#ifndef STRATASIM_REPORT_RESULTS_H_
#define STRATASIM_REPORT_RESULTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/gnn_figures.h"
#include "core/metrics.h"
#include "core/pipeline_figures.h"
#include "core/solver_figures.h"
#include "report/moe_summary.h"

namespace stratasim {

struct StrategyResult {
  std::string name;
  std::string kind;
  int num_gpus = 0;
  // False when the strategy could not be planned or simulated; `error` says why and the
  // metrics are not meaningful.
  bool ok = true;
  std::string error;
  Metrics metrics;
  std::vector<std::string> notes;  // plan facts worth showing (micro-batches, buckets...)
  // Pipelined plans: the largest peak memory of the ranks of each stage; empty otherwise.
  std::vector<double> peak_memory_per_stage_bytes;
  // MoE strategies only: their iteration-time distribution, load balance and placement
  // figures (docs/moe.md).
  std::optional<MoeSummary> moe;
  // Pipelined plans only: the partition and a planner's choices and predictions
  // (Plan::pipeline); what the trace measured of the stages is in `metrics`
  // (stage_compute_s, stage_bubble_fraction, startup_s). Set by the parent process from its
  // plan: not on the wire between simulation child and parent.
  std::optional<PipelineFigures> pipeline;
  // Plans a MILP planner chose (Plan::solver): printed by report/solver_table.h, never written
  // to files (its solve time is wall-clock). Set by the parent process from its plan.
  std::optional<SolverFigures> solver;
  // GNN feature-transfer strategies only (Plan::gnn): bytes copied, hit rate and cache memory,
  // printed by report/gnn_table.h and written to results.json. Set by the parent from its plan.
  std::optional<GnnFigures> gnn;
  // How it was simulated (docs/scale.md): "folded: ..." or "full: <why not folded>", and the
  // size of the run: tasks in the plan's graph, SimGrid activities and timers, distinct
  // instants at which they ended, tasks fused into another's activity.
  std::string fold;
  long long tasks = 0;
  long long activities = 0;
  long long instants = 0;
  long long fused_tasks = 0;
};

struct RunResults {
  std::string scenario_name;
  std::string scenario_file;
  std::uint64_t seed = 0;
  std::string tool_version;
  std::string gpu_summary;  // e.g. "2 x 8 A100-SXM4-80GB"
  std::string model_summary;
  std::vector<StrategyResult> strategies;
};

}  // namespace stratasim

#endif  // STRATASIM_REPORT_RESULTS_H_
