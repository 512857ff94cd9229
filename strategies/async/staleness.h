// How far asynchronous data parallelism lets workers drift apart, measured from a trace (not
// from the plan): for every worker (a rank that runs forward kernels), when it started each
// iteration and when it finished that iteration's backward pass.
#ifndef STRATASIM_STRATEGIES_ASYNC_STALENESS_H_
#define STRATASIM_STRATEGIES_ASYNC_STALENESS_H_

#include <vector>

#include "core/task_graph.h"
#include "core/trace.h"

namespace stratasim {

struct StalenessFigures {
  std::vector<int> workers;  // the ranks that run forward kernels
  // Over every worker w and iteration t: t minus the number of iterations that every worker
  // had finished (its last backward kernel ended) when w started t (its first forward kernel).
  // 0 under BSP; at most s under SSP with staleness s.
  int max_iterations_ahead = 0;
  // Mean over workers and iterations t >= 1 of the time from the end of a worker's backward pass
  // of t - 1 to the start of its forward pass of t: the exchange, the optimizer step and any
  // wait for slower workers that the worker's compute did not hide.
  double mean_gap_s = 0;
  double max_gap_s = 0;
};

// Throws stratasim::Error when the trace does not match the graph.
StalenessFigures MeasureStaleness(const TaskGraph& g, const ExecutionTrace& trace);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_ASYNC_STALENESS_H_
