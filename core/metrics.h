// Figures computed from a task graph and its execution trace, never from the strategy.
#ifndef STRATASIM_CORE_METRICS_H_
#define STRATASIM_CORE_METRICS_H_

#include <map>
#include <string>
#include <vector>

#include "core/intervals.h"
#include "core/task_graph.h"
#include "core/trace.h"

namespace stratasim {

struct MetricsInput {
  int warmup_iterations = 0;    // iterations [0, warmup) are not measured
  int measured_iterations = 1;  // iterations [warmup, warmup + measured)
  double samples_per_iteration = 0;
  double tokens_per_sample = 0;
  std::vector<double> peak_flops_per_rank;  // dense peak for the training precision
  std::vector<double> memory_capacity_per_rank;
  // Pipelined plans: each rank's stage (Plan::rank_stage, the highest the last stage); empty
  // for other plans, which then have no per-stage figures.
  std::vector<int> rank_stage;
};

struct Metrics {
  double iteration_time_s = 0;  // mean over the measured iterations
  double samples_per_s = 0;
  double tokens_per_s = 0;
  // Forward + backward FLOPs, no recomputation; a fused attention kernel counts the full s x s
  // products whatever its causal mask skips (Narayanan et al. 2021's model FLOPs).
  double model_flops_per_iteration = 0;
  double tflops_per_gpu = 0;  // model TFLOP/s per GPU
  double mfu = 0;             // model FLOP/s over the cluster's summed peak
  // Hardware FLOPs utilisation: as mfu, counting the FLOPs the GPUs ran, recomputation
  // included (Chowdhery et al. 2022, "PaLM", Appendix B; Korthikanti et al. 2022, §5).
  double hfu = 0;
  // Mean over ranks of the fraction of the measured window in which the rank communicated
  // (collectives, sends, receives, copies: from the moment every peer had joined to the end;
  // waiting for peers is not communicating) and computed nothing.
  double exposed_comm_fraction = 0;
  // The same, per communication category (Task::category: "tp", "pp", "dp", ...; "other" when
  // a task has none). Exposed time of two categories at once counts in both.
  std::map<std::string, double> exposed_comm_by_category;
  // Mean over ranks of the fraction of the measured window in which the rank neither computed
  // nor communicated: waiting for work or for its peers. In a pipeline this is the bubble
  // (Narayanan et al. 2021, SC, §2.2.1), plus any wait for a slower stage.
  double idle_fraction = 0;
  std::vector<double> peak_memory_bytes;  // per rank, from the trace's memory events
  // Per rank: what was allocated at the moment of that peak, by memory category (the memory
  // tasks' Task::category: "weights", "activations", ...; "other" when a task has none).
  std::vector<std::map<std::string, double>> peak_memory_breakdown;
  std::vector<double> memory_capacity_bytes;  // per rank, as given in MetricsInput
  std::vector<int> oom_ranks;                 // ranks whose peak exceeds their capacity
  // Pipelined plans only (MetricsInput::rank_stage given; empty and 0 otherwise), per stage,
  // stage 0 first (docs/report-formats.md, "pipeline"):
  // - per measured iteration, the time the stage's busiest rank computed (any compute task:
  //   forward, backward, recomputation, optimizer step; overlapping kernels counted once);
  std::vector<double> stage_compute_s;
  // - mean over the stage's ranks of the share of the measured window in which the rank
  //   computed nothing: the bubble, as a compute stream sees it. Unlike idle_fraction it
  //   includes communication that no compute hid (exposed point-to-point and data-parallel
  //   transfers), so that stage_compute_s / iteration_time_s + this = 1 on a stage of one rank.
  std::vector<double> stage_bubble_fraction;
  // Start-up: mean over the measured iterations of the time from the iteration's first forward
  // kernel on any rank to the first forward kernel of that iteration on the last stage (with
  // the interleaved schedule, of the last stage's first chunk, p - 1 chunks in): how long the
  // last stage waits for its first work.
  double startup_s = 0;
};

// Time that the tasks of one category spent on the ranks within the measured window, summed
// over ranks: `covered_s` in all, `exposed_s` while the rank computed nothing. A task counts
// from its start (waiting for its peers included) to its end.
struct CategoryTime {
  double covered_s = 0;
  double exposed_s = 0;
};

// What a TraceMeter measured: the metrics, when each iteration ended, and the time of the
// categories it was asked to track.
struct Measured {
  Metrics metrics;
  std::vector<double> iteration_end_s;  // iterations [0, warmup + measured)
  double window_start_s = 0;
  double window_end_s = 0;
  std::map<std::string, CategoryTime> tracked;
};

// Computes the metrics from tasks and their records handed over one at a time, keeping only
// what a window of the run needs (docs/scale.md, "Iterations"). Add() takes tasks in any
// order; Seal() may be used only when they come in iteration order (a graph planned while it
// is simulated), and then drops everything before a time that no later task starts before.
class TraceMeter {
 public:
  // `fold`: TaskGraph::fold() of the graph, empty when not folded; a folded rank's tasks are
  // mirrors that stand for nothing, and are not measured. Throws stratasim::Error when `in`
  // has no measured iteration.
  TraceMeter(int num_ranks, MetricsInput in, std::vector<std::string> tracked = {},
             std::vector<int> fold = {});
  void Add(const Task& task, const TraceRecord& r);
  void Seal(double safe_s);
  // `fold`: the graph's fold once planned, which must be the one given at construction.
  // Throws stratasim::Error when an iteration had no tasks, the measured iterations took no
  // time, or the fold changed.
  Measured Finish(const std::vector<int>& fold);

 private:
  void Measure(double lo, double hi);
  void ApplyMemory(double before);
  double WindowStart() const;
  void MeasureStages(const std::vector<int>& fold, double window, Metrics* m) const;

  enum : int { kBusy = 0, kComm = 1, kFirstTracked = 2 };
  int n_;
  MetricsInput in_;
  int first_;
  int last_;
  std::vector<std::string> tracked_names_;
  SealedIntervals sets_;
  std::map<std::string, int> category_set_;  // communication category -> set index
  std::vector<double> iteration_end_;
  bool window_start_known_;
  int highest_iteration_ = -1;
  double sealed_ = -1e300;  // figures cover [window start, sealed_)
  // Per rank.
  std::vector<double> model_flops_, hardware_flops_, exposed_, idle_;
  std::vector<int> fold_;
  std::vector<double> weight_;  // per rank: the ranks it stands for (0: a folded rank)
  std::map<std::string, std::vector<double>> exposed_of_;
  std::vector<std::vector<double>> tracked_covered_, tracked_exposed_;  // [tracked][rank]
  // Pipelined plans: per rank, compute time in the window; per measured iteration, the start of
  // its first forward kernel on any rank and on the last stage (+inf: none yet).
  std::vector<double> busy_;
  int last_stage_ = -1;
  std::vector<double> first_forward_, last_stage_forward_;
  struct MemoryEvent {
    double time;
    double delta;
    Name category;
  };
  std::vector<std::vector<MemoryEvent>> mem_events_;
  std::vector<double> mem_current_, mem_peak_;
  std::vector<std::map<std::string, double>> mem_live_, mem_at_peak_;
};

// The metrics of a whole graph and its trace. Throws stratasim::Error when the trace does not
// cover the graph or an iteration is missing.
Metrics ComputeMetrics(const TaskGraph& g, const ExecutionTrace& t, const MetricsInput& in);

}  // namespace stratasim

#endif  // STRATASIM_CORE_METRICS_H_
