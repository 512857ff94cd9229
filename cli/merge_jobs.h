// Several jobs' task graphs as one graph on the whole cluster (docs/multi-job.md): each job's
// ranks renamed to the GPUs placement gave it, its streams prefixed with its name, its tags
// and collectives renumbered, and its GPUs started at its arrival (TaskGraph::SetRankStart).
// Simulated once, the jobs' flows share the links under max-min as any flows do.
#ifndef STRATASIM_CLI_MERGE_JOBS_H_
#define STRATASIM_CLI_MERGE_JOBS_H_

#include <string>
#include <vector>

#include "core/task_graph.h"
#include "core/trace.h"

namespace stratasim {

struct PlacedJob {
  std::string name;
  const TaskGraph* graph = nullptr;  // planned on a cluster of its own (ranks 0..n-1); unfolded
  std::vector<int> gpus;             // the cluster GPU of each of its ranks
  double arrival_s = 0;
};

struct MergedJobs {
  TaskGraph graph;
  // Per job: the id of its first task and the index of its first collective in `graph`.
  std::vector<TaskId> first_task;
  std::vector<int> first_collective;
};

// Throws stratasim::Error when a job's graph is folded, its GPU list does not match its ranks,
// a GPU is outside [0, num_gpus) or two jobs share one.
MergedJobs MergeJobs(const std::vector<PlacedJob>& jobs, int num_gpus);

// Job `j`'s part of the merged graph's trace, in the job's own ids, ranks and streams, as if
// its graph had been simulated alone: what its metrics are computed from.
ExecutionTrace JobTrace(const MergedJobs& merged, const ExecutionTrace& trace, size_t j,
                        const TaskGraph& job_graph);

}  // namespace stratasim

#endif  // STRATASIM_CLI_MERGE_JOBS_H_
