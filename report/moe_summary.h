// The mixture-of-experts figures of one strategy (docs/moe.md): the iteration-time
// distribution over the measured iterations, the load-balance ratio the papers use, and where
// the MoE-specific time goes (exposed all-to-all, expert placement changes).
#ifndef STRATASIM_REPORT_MOE_SUMMARY_H_
#define STRATASIM_REPORT_MOE_SUMMARY_H_

#include <string>
#include <vector>

#include "core/metrics.h"
#include "core/moe_figures.h"
#include "core/task_graph.h"
#include "core/trace.h"

namespace stratasim {

struct MoeSummary {
  int top_k = 0;
  std::vector<double> iteration_s;  // each measured iteration, in order
  double mean_s = 0, p50_s = 0, p95_s = 0, min_s = 0, max_s = 0;
  double tokens_per_s = 0;  // tokens per iteration / mean iteration time
  // Whether the strategy is the plain expert-parallel baseline (MoeFigures::baseline). Set by
  // the parent process from its plan (cli/run_scenario.cpp); neither on the wire between
  // simulation child and parent nor in results.json.
  bool is_baseline = false;
  // Mean iteration time of the baseline (report/moe_table.h) over this one's; 0 when the run
  // has none of the same top_k. `baseline` names the one compared with.
  double speedup = 0;
  std::string baseline;
  // Load-balance ratio (Pro-Prophet, arXiv 2411.10003, §6: RB): standard deviation of the
  // tokens each GPU computes with experts on their owners, over that under the strategy's
  // placement, averaged over measured iterations and layers; 1 when nothing was balanced.
  double load_std_before = 0, load_std_after = 0, load_balance_ratio = 1;
  // Per iteration, mean over GPUs: all-to-all time during which the GPU computed nothing, from
  // the moment it joined (so waiting for the most loaded GPU, the imbalance, is included).
  double exposed_a2a_s = 0;
  // Per iteration, mean over GPUs: time in parameter transfers and gradient reduces of
  // replicated experts, and the part of it during which the GPU computed nothing.
  double placement_s = 0, placement_exposed_s = 0;
  double peak_memory_bytes = 0;  // the largest over GPUs
  double dropped_tokens = 0;     // per iteration
  double replicas = 0;           // expert copies per iteration, over all layers
  double transfer_bytes = 0;     // replica parameters and gradients moved per iteration
  // Persistent placements (MoeFigures): copies created + dropped per iteration, the fraction
  // of (iteration, layer) placements kept, bytes moved less than re-sending every copy.
  double placement_changes = 0, placement_kept_fraction = 0, transfer_bytes_saved = 0;
  // MoeFigures::expert_parallel, expert_data_parallel: GPUs per expert-parallel group, copies
  // of each expert (0/1 when the planner did not say).
  int expert_parallel = 0, expert_data_parallel = 1;
  // MoeFigures::gpu_tokens_per_iteration: per measured iteration, per GPU, the tokens computed
  // under the placement, mean over layers; empty above kMaxMoeLoadSeriesGpus GPUs.
  std::vector<std::vector<double>> gpu_tokens_per_iteration;
};

// The categories whose time the summary reads: a TraceMeter must track them.
inline const std::vector<std::string> kMoeTrackedCategories = {"a2a", "placement"};

// From what a TraceMeter tracking kMoeTrackedCategories measured over `num_ranks` ranks, and
// the plan's figures (strategies/moe/moe_graph.h).
MoeSummary SummarizeMoe(const Measured& m, int num_ranks, int measured, const MoeFigures& figures);

// The same from a whole graph and its trace, with the strategy's metrics. Throws
// stratasim::Error when the trace does not match the graph.
MoeSummary SummarizeMoe(const TaskGraph& g, const ExecutionTrace& t, int warmup, int measured,
                        const MoeFigures& figures, const Metrics& metrics);

// The summary as a JSON object (the "moe" member of a strategy in results.json).
std::string MoeSummaryJson(const MoeSummary& m);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_MOE_SUMMARY_H_
