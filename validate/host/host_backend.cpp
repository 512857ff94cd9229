#include "validate/host/host_backend.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "validate/host/host_executor.h"

namespace stratasim::validate {
namespace {

// Task buffers may use this share of the machine's memory: the rest is the OS's, the
// simulator's and this process's.
constexpr double kWorkspaceShare = 0.75;

BenchResult Summarise(std::vector<double> samples) {
  BenchResult r;
  r.samples = static_cast<int>(samples.size());
  if (samples.empty()) return r;
  std::sort(samples.begin(), samples.end());
  r.min_s = samples.front();
  const std::size_t n = samples.size();
  r.median_s = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return r;
}

// Runs graphs of `warmup + reps` repetitions, made by `make`, whose repetition i ends at the
// time `duration(trace, i)` reports, doubling reps until the timed ones total min_total_s.
BenchResult Repeat(
    const BenchOptions& o, const std::function<TaskGraph(int count)>& make,
    const std::function<double(const TaskGraph&, const ExecutionTrace&, int)>& duration,
    const std::function<ExecutionTrace(const TaskGraph&)>& run) {
  int reps = std::max(1, o.repetitions);
  const int warmup = std::max(0, o.warmup);
  for (;;) {
    const TaskGraph g = make(warmup + reps);
    const ExecutionTrace t = run(g);
    std::vector<double> samples;
    double total = 0;
    for (int i = warmup; i < warmup + reps; ++i) {
      samples.push_back(duration(g, t, i));
      total += samples.back();
    }
    if (total >= o.min_total_s || reps >= (1 << 14)) return Summarise(samples);
    // Enough repetitions to reach the target, with a margin, in one more run.
    const double per = std::max(total / reps, 1e-7);
    reps = std::min(1 << 14, std::max(2 * reps, static_cast<int>(1.2 * o.min_total_s / per)));
  }
}

}  // namespace

HostBackend::HostBackend(const HostBackendOptions& options) : machine_(options.machine) {
  if (!machine_) machine_ = std::make_shared<host::HostMachine>(host::ProbeHostMachine());
  ranks_ = options.ranks > 0 ? options.ranks : machine_->hardware_threads;
}

ClusterSpec HostBackend::Describe() const { return host::HostClusterSpec(*machine_, ranks_); }

ExecutionTrace HostBackend::Run(const TaskGraph& g, const RunOptions& options) {
  host::ExecutorLimits limits;
  limits.ranks = ranks_;
  limits.memory_limit_bytes_per_rank = options.memory_limit_bytes_per_rank > 0
                                           ? options.memory_limit_bytes_per_rank
                                           : machine_->memory_bytes / ranks_;
  limits.workspace_limit_bytes = machine_->memory_bytes * kWorkspaceShare;
  limits.processes = options.processes;
  return host::ExecuteOnHost(g, limits);
}

namespace {

// `count` copies of `task` in a row on each of `ranks` ranks.
TaskGraph RepeatedTask(const Task& task, int count, int ranks) {
  TaskGraph g(ranks);
  const int stream = g.Stream("compute");
  for (int r = 0; r < ranks; ++r) {
    for (int i = 0; i < count; ++i) {
      Task t = task;
      t.rank = r;
      t.stream = stream;
      t.iteration = 0;
      t.deps.clear();
      g.Add(t);
    }
  }
  return g;
}

// Repetition i: the mean over ranks of its duration (tasks are added rank by rank).
double MeanTaskSeconds(const TaskGraph& g, const ExecutionTrace& t, int i) {
  const int count = static_cast<int>(g.tasks().size()) / g.num_ranks();
  double sum = 0;
  for (int r = 0; r < g.num_ranks(); ++r) {
    const TraceRecord& rec = t.records[static_cast<std::size_t>(r * count + i)];
    sum += rec.end_s - rec.start_s;
  }
  return sum / g.num_ranks();
}

}  // namespace

BenchResult HostBackend::TimeCompute(const Task& task, const BenchOptions& options) {
  // Every rank runs the task at once, as in a data-parallel step: CPU ranks share the caches
  // and the memory bus (a GPU shares nothing with its neighbours), so one thread alone would
  // measure a machine the plans never run on.
  return Repeat(
      options, [&](int n) { return RepeatedTask(task, n, ranks_); }, MeanTaskSeconds,
      [&](const TaskGraph& g) { return Run(g, RunOptions{}); });
}

BenchResult HostBackend::TimeLaunch(const BenchOptions& options) {
  Task empty;
  empty.kind = TaskKind::kCompute;
  empty.op = OpKind::kOther;
  empty.name = "empty";
  return TimeCompute(empty, options);
}

BenchResult HostBackend::TimeCopy(double bytes, CopyDirection direction,
                                  const BenchOptions& options) {
  Task copy;
  copy.kind = TaskKind::kCopy;
  copy.copy = direction;
  copy.bytes = bytes;
  copy.name = "copy";
  return TimeCompute(copy, options);
}

BenchResult HostBackend::TimeCollective(CollectiveKind kind, int group_size, double bytes,
                                        DType dtype, const BenchOptions& options) {
  if (group_size > ranks_) {
    throw BackendError(BackendError::Kind::kTooFewRanks,
                       "host backend: a collective over " + std::to_string(group_size) +
                           " ranks needs " + std::to_string(group_size) +
                           " threads but this run has " + std::to_string(ranks_));
  }
  auto make = [&](int count) {
    TaskGraph g(group_size);
    const int stream = g.Stream("comm");
    for (int i = 0; i < count; ++i) {
      Collective c;
      c.kind = kind;
      c.bytes = bytes;
      c.dtype = dtype;
      c.root = 0;
      for (int r = 0; r < group_size; ++r) c.ranks.push_back(r);
      if (kind == CollectiveKind::kAllToAllV) {
        c.matrix.assign(static_cast<std::size_t>(group_size * group_size), bytes / group_size);
      }
      Task member;
      member.stream = stream;
      member.name = std::string(ToString(kind));
      member.phase = Phase::kCommunication;
      member.dtype = dtype;
      member.bytes = bytes;
      g.AddCollective(c, member);
    }
    return g;
  };
  // From the moment every member had joined to the last member's end: the time nccl-tests
  // reports after its barrier.
  auto duration = [](const TaskGraph& g, const ExecutionTrace& t, int i) {
    const Collective& c = g.collectives()[static_cast<std::size_t>(i)];
    double joined = 0, end = 0;
    for (TaskId id : c.members) {
      joined = std::max(joined, t.records[static_cast<std::size_t>(id)].peers_joined_s);
      end = std::max(end, t.records[static_cast<std::size_t>(id)].end_s);
    }
    return end - joined;
  };
  return Repeat(options, make, duration, [&](const TaskGraph& g) { return Run(g, RunOptions{}); });
}

}  // namespace stratasim::validate
