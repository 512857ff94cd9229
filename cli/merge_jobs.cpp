#include "cli/merge_jobs.h"

#include <algorithm>

#include "core/error.h"

namespace stratasim {

MergedJobs MergeJobs(const std::vector<PlacedJob>& jobs, int num_gpus) {
  MergedJobs out{TaskGraph(num_gpus), {}, {}};
  TaskGraph& g = out.graph;
  std::vector<char> taken(static_cast<size_t>(num_gpus), 0);
  int tag_base = 0;
  for (const PlacedJob& job : jobs) {
    const TaskGraph& src = *job.graph;
    if (!src.fold().empty()) throw Error("job " + job.name + ": a folded plan cannot be placed");
    if (static_cast<int>(job.gpus.size()) != src.num_ranks()) {
      throw Error("job " + job.name + ": " + std::to_string(job.gpus.size()) + " GPUs placed for " +
                  std::to_string(src.num_ranks()) + " ranks");
    }
    for (int gpu : job.gpus) {
      if (gpu < 0 || gpu >= num_gpus || taken[static_cast<size_t>(gpu)]++) {
        throw Error("job " + job.name + ": GPU " + std::to_string(gpu) +
                    " is outside the cluster or taken by another job");
      }
      if (job.arrival_s > 0) g.SetRankStart(gpu, job.arrival_s);
    }
    auto gpu_of = [&](int rank) { return job.gpus[static_cast<size_t>(rank)]; };
    std::vector<int> stream_of;
    for (size_t k = 0; k < src.streams().size(); ++k) {
      stream_of.push_back(g.Stream(job.name + "/" + src.streams()[k]));
      g.SetStreamPriority(stream_of.back(), src.stream_priorities()[k]);
    }
    const TaskId first = g.next_id();
    const int first_collective = g.next_collective();
    out.first_task.push_back(first);
    out.first_collective.push_back(first_collective);
    // Collectives first, in index order; their members attach as the tasks are added, in the
    // order of their ranks, which renaming keeps.
    for (const Collective& c : src.collectives()) {
      Collective copy = c;
      for (int& r : copy.ranks) r = gpu_of(r);
      copy.root = gpu_of(c.root);
      copy.members.clear();
      g.DeclareCollective(std::move(copy));
    }
    int max_tag = -1;
    for (const Task& t : src.tasks()) {
      Task copy = t;
      copy.rank = gpu_of(t.rank);
      copy.stream = stream_of[static_cast<size_t>(t.stream)];
      for (TaskId& d : copy.deps) d += first;
      if (t.mirror >= 0) copy.mirror = t.mirror + first;
      if (t.collective >= 0) copy.collective = t.collective + first_collective;
      if (t.kind == TaskKind::kSend || t.kind == TaskKind::kRecv) {
        copy.peer = gpu_of(t.peer);
        copy.tag = t.tag + tag_base;
        max_tag = std::max(max_tag, t.tag);
      }
      g.Add(std::move(copy));
    }
    tag_base += max_tag + 1;
  }
  g.Validate();
  return out;
}

ExecutionTrace JobTrace(const MergedJobs& merged, const ExecutionTrace& trace, size_t j,
                        const TaskGraph& job_graph) {
  ExecutionTrace out;
  out.executor = trace.executor;
  out.num_ranks = job_graph.num_ranks();
  out.streams = job_graph.streams();
  const TaskId first = merged.first_task[j];
  for (const Task& t : job_graph.tasks()) {
    TraceRecord r = trace.records.at(static_cast<size_t>(first + t.id));
    r.task = t.id;
    r.rank = t.rank;
    r.stream = t.stream;
    out.makespan_s = std::max(out.makespan_s, r.end_s);
    out.records.push_back(r);
  }
  for (size_t c = 0; c < job_graph.collectives().size(); ++c) {
    const size_t at = static_cast<size_t>(merged.first_collective[j]) + c;
    out.collective_algorithms.push_back(
        at < trace.collective_algorithms.size() ? trace.collective_algorithms[at] : "");
  }
  return out;
}

}  // namespace stratasim
