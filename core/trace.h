// What an executor produced: when each task ran. Both executors (SimGrid and real GPUs) write
// this same format, so that runs compare task by task.
#ifndef STRATASIM_CORE_TRACE_H_
#define STRATASIM_CORE_TRACE_H_

#include <string>
#include <vector>

#include "core/link_usage.h"
#include "core/task_graph.h"

namespace stratasim {

struct TraceRecord {
  TaskId task = -1;
  int rank = 0;
  int stream = 0;
  double start_s = 0;  // the task was ready and its stream free (a collective: this rank joined)
  double end_s = 0;
  // Collectives and transfers: when every participant had joined (the last member reached the
  // collective; both ends of a transfer were ready). The gap after start_s is time this rank
  // spent waiting for its peers. Equal to start_s for other tasks.
  double peers_joined_s = 0;
};

struct ExecutionTrace {
  std::string executor;  // "simgrid", "host", "cuda"
  int num_ranks = 0;
  std::vector<std::string> streams;
  std::vector<TraceRecord> records;  // records[i].task == i: one record per task of the graph
  // Per collective of the graph: how the executor ran it, e.g. "ring/simple/4ch" (empty when
  // the executor does not choose, as NCCL's own choice is not observable from outside).
  std::vector<std::string> collective_algorithms;
  double makespan_s = 0;
  long long activities = 0;  // SimGrid activities and kernel timers the run created (benchmarks)
  // Distinct simulated times at which they ended: SimGrid re-solves the max-min sharing of what
  // changed once per instant, so instants, not events, count that work (docs/collectives.md).
  long long instants = 0;
  // Tasks that ran inside another task's activity (SimulationSpec::fuse): activities saved.
  long long fused_tasks = 0;
  // Bytes per link over time (SimGrid executor only; see core/link_usage.h).
  LinkUsage link_usage;
};

std::string TraceToJson(const ExecutionTrace& t);
ExecutionTrace TraceFromJson(const std::string& text);

}  // namespace stratasim

#endif  // STRATASIM_CORE_TRACE_H_
