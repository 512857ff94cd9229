// What every asynchronous data-parallel kind (strategies/async/) runs on a worker per iteration:
// the forward and backward passes of its micro-batches with gradient accumulation, as DDP's step
// does (strategies/data/ddp_step.h), without the exchange and optimizer step that differ.
#ifndef STRATASIM_STRATEGIES_ASYNC_WORKER_PASSES_H_
#define STRATASIM_STRATEGIES_ASYNC_WORKER_PASSES_H_

#include <string>
#include <vector>

#include "core/task_graph.h"
#include "models/workload.h"
#include "strategies/layer_tasks.h"

namespace stratasim {

// Adds `micro_batches` forward + backward passes of `w` at `at` (prefix "it<t>/mb<m>/"), the
// first forward kernel after every task of `first_deps` besides stream order. Returns the id of
// the last backward kernel (the gradients of the iteration are final after it).
TaskId AddWorkerPasses(TaskGraph& g, const Workload& w, DType act, const TaskPlace& at,
                       int micro_batches, const std::vector<TaskId>& first_deps);

// A memory-bound element-wise kernel over `params` parameters (delay compensation, update
// buffers, gradient sums): `flops` and `bytes` in all, named `name`, on `at`.
Task ElementwiseTask(const TaskPlace& at, const std::string& name, Phase phase, double flops,
                     double bytes);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_ASYNC_WORKER_PASSES_H_
