// One run of a TaskGraph on the host backend's threads (see host_backend.h for the model).
// Separate from HostBackend so that the backend's micro-benchmarks reuse the very same path.
#ifndef STRATASIM_VALIDATE_HOST_HOST_EXECUTOR_H_
#define STRATASIM_VALIDATE_HOST_HOST_EXECUTOR_H_

#include "core/task_graph.h"
#include "core/trace.h"
#include "validate/process_group.h"

namespace stratasim::validate::host {

struct ExecutorLimits {
  int ranks = 1;                           // ranks the hardware offers
  double memory_limit_bytes_per_rank = 0;  // kMemory ledger limit (0: no limit)
  double workspace_limit_bytes = 0;        // all threads' buffers together (0: no limit)
  // A multi-process run (RunOptions::processes, backend.h): this process runs only the lanes
  // of rank processes->rank(); collectives and send/recv pairs go through the ProcessGroup
  // (host_process_collectives.h); trace times count from the start instant the processes
  // agree on (validate/clock_sync.h). nullptr: every rank runs here, on shared memory.
  ProcessGroup* processes = nullptr;
};

// Runs `g` once. Throws BackendError (validate/backend.h) with the partial trace.
ExecutionTrace ExecuteOnHost(const TaskGraph& g, const ExecutorLimits& limits);

}  // namespace stratasim::validate::host

#endif  // STRATASIM_VALIDATE_HOST_HOST_EXECUTOR_H_
