// Figures computed from a task graph and its execution trace, never from the strategy.
#ifndef STRATASIM_CORE_METRICS_H_
#define STRATASIM_CORE_METRICS_H_

#include <map>
#include <string>
#include <vector>

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
};

struct Metrics {
  double iteration_time_s = 0;  // mean over the measured iterations
  double samples_per_s = 0;
  double tokens_per_s = 0;
  double model_flops_per_iteration = 0;  // forward + backward FLOPs, no recomputation
  double tflops_per_gpu = 0;             // model TFLOP/s per GPU
  double mfu = 0;                        // model FLOP/s over the cluster's summed peak
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
};

// Throws stratasim::Error when the trace does not cover the graph or an iteration is missing.
Metrics ComputeMetrics(const TaskGraph& g, const ExecutionTrace& t, const MetricsInput& in);

}  // namespace stratasim

#endif  // STRATASIM_CORE_METRICS_H_
