#include "core/metrics.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/error.h"
#include "core/intervals.h"

namespace stratasim {
namespace {

bool IsCommunication(TaskKind k) {
  return k == TaskKind::kCollective || k == TaskKind::kSend || k == TaskKind::kRecv ||
         k == TaskKind::kCopy;
}

}  // namespace

Metrics ComputeMetrics(const TaskGraph& g, const ExecutionTrace& t, const MetricsInput& in) {
  if (t.records.size() != g.tasks().size()) {
    throw Error("trace has " + std::to_string(t.records.size()) + " records for a graph of " +
                std::to_string(g.tasks().size()) + " tasks");
  }
  if (in.measured_iterations < 1) throw Error("metrics need at least one measured iteration");
  const int first = in.warmup_iterations;
  const int last = in.warmup_iterations + in.measured_iterations - 1;
  const int n = g.num_ranks();
  // A folded graph (TaskGraph::fold) simulates one representative per class of identical
  // ranks: each task of a representative stands for the ranks it represents, and a folded
  // rank's per-rank figures are its representative's. Mirror tasks on folded ranks move
  // traffic but stand for nothing.
  std::vector<double> weight(n, g.fold().empty() ? 1.0 : 0.0);
  for (int r = 0; r < n && !g.fold().empty(); ++r) weight[g.Representative(r)] += 1;

  // An iteration ends when its last task ends; the measured window runs from the end of the
  // iteration before the first measured one (or time 0) to the end of the last measured one.
  std::vector<double> iteration_end(last + 1, -1);
  double model_flops = 0, hardware_flops = 0;
  for (const Task& task : g.tasks()) {
    if (task.iteration < 0 || task.iteration > last) continue;
    iteration_end[task.iteration] =
        std::max(iteration_end[task.iteration], t.records[task.id].end_s);
    if (task.iteration >= first && task.kind == TaskKind::kCompute &&
        (task.phase == Phase::kForward || task.phase == Phase::kBackward)) {
      model_flops += task.flops * weight[task.rank];
    }
    if (task.iteration >= first && task.kind == TaskKind::kCompute &&
        task.phase == Phase::kRecompute) {
      hardware_flops += task.flops * weight[task.rank];
    }
  }
  for (int i = 0; i <= last; ++i) {
    if (iteration_end[i] < 0) throw Error("iteration " + std::to_string(i) + " has no tasks");
  }
  const double window_start = first > 0 ? iteration_end[first - 1] : 0.0;
  const double window_end = iteration_end[last];
  const double window = window_end - window_start;
  if (window <= 0) throw Error("the measured iterations took no time");

  Metrics m;
  m.iteration_time_s = window / in.measured_iterations;
  m.samples_per_s = in.samples_per_iteration / m.iteration_time_s;
  m.tokens_per_s = m.samples_per_s * in.tokens_per_sample;
  m.model_flops_per_iteration = model_flops / in.measured_iterations;
  const double achieved = m.model_flops_per_iteration / m.iteration_time_s;
  m.tflops_per_gpu = n > 0 ? achieved / n / 1e12 : 0;
  double peak_sum = 0;
  for (double p : in.peak_flops_per_rank) peak_sum += p;
  m.mfu = peak_sum > 0 ? achieved / peak_sum : 0;
  hardware_flops += model_flops;
  m.hfu =
      peak_sum > 0 ? hardware_flops / in.measured_iterations / m.iteration_time_s / peak_sum : 0;

  std::vector<std::vector<Interval>> comm(n), busy(n);
  std::map<std::string, std::vector<std::vector<Interval>>> comm_of;  // by category, per rank
  struct MemoryEvent {
    double time;
    double delta;
    Name category;
  };
  std::vector<std::vector<MemoryEvent>> mem_events(n);
  for (const Task& task : g.tasks()) {
    if (weight[task.rank] == 0) continue;
    const TraceRecord& r = t.records[task.id];
    if (task.kind == TaskKind::kMemory) {
      mem_events[task.rank].push_back({r.start_s, task.memory_delta_bytes, task.category});
    } else if (task.kind == TaskKind::kCompute) {
      busy[task.rank].push_back({r.start_s, r.end_s});
    } else if (IsCommunication(task.kind)) {
      const Interval active{std::max(r.start_s, r.peers_joined_s), r.end_s};
      comm[task.rank].push_back(active);
      std::vector<std::vector<Interval>>& of =
          comm_of[task.category.empty() ? std::string("other") : task.category.str()];
      if (of.empty()) of.resize(n);
      of[task.rank].push_back(active);
    }
  }
  double exposed = 0, idle = 0;
  std::map<std::string, double> exposed_of;
  const std::vector<Interval> whole{{window_start, window_end}};
  for (int rank = 0; rank < n; ++rank) {
    if (weight[rank] == 0) continue;
    const std::vector<Interval> computing = Union(busy[rank]);
    exposed +=
        weight[rank] * ExclusiveLength(Union(comm[rank]), computing, window_start, window_end);
    for (auto& [category, per_rank] : comm_of) {
      exposed_of[category] += weight[rank] * ExclusiveLength(Union(per_rank[rank]), computing,
                                                             window_start, window_end);
    }
    std::vector<Interval> working = busy[rank];
    working.insert(working.end(), comm[rank].begin(), comm[rank].end());
    idle += weight[rank] * ExclusiveLength(whole, Union(working), window_start, window_end);
  }
  m.exposed_comm_fraction = n > 0 ? exposed / n / window : 0;
  m.idle_fraction = n > 0 ? idle / n / window : 0;
  for (const auto& [category, length] : exposed_of) {
    m.exposed_comm_by_category[category] = n > 0 ? length / n / window : 0;
  }

  m.peak_memory_bytes.assign(n, 0);
  m.peak_memory_breakdown.assign(n, {});
  m.memory_capacity_bytes = in.memory_capacity_per_rank;
  for (int rank = 0; rank < n; ++rank) {
    // At equal times frees apply before allocations (a buffer released and another taken at
    // the same instant do not coexist); stable so equal events keep graph order.
    std::stable_sort(mem_events[rank].begin(), mem_events[rank].end(),
                     [](const MemoryEvent& a, const MemoryEvent& b) {
                       if (a.time != b.time) return a.time < b.time;
                       return a.delta < 0 && b.delta >= 0;
                     });
    double current = 0, peak = 0;
    std::map<std::string, double> live;
    for (const MemoryEvent& e : mem_events[rank]) {
      current += e.delta;
      live[e.category.empty() ? std::string("other") : e.category.str()] += e.delta;
      if (current > peak) {
        peak = current;
        m.peak_memory_breakdown[rank] = live;
      }
    }
    // Categories fully freed by the peak add nothing to its explanation.
    std::map<std::string, double>& at_peak = m.peak_memory_breakdown[rank];
    for (auto it = at_peak.begin(); it != at_peak.end();) {
      it = it->second > 0.5 ? std::next(it) : at_peak.erase(it);  // < 1 byte: rounding
    }
    m.peak_memory_bytes[rank] = peak;
  }
  for (int rank = 0; rank < n; ++rank) {
    const int rep = g.Representative(rank);
    if (rep != rank) {
      m.peak_memory_bytes[rank] = m.peak_memory_bytes[rep];
      m.peak_memory_breakdown[rank] = m.peak_memory_breakdown[rep];
    }
    if (rank < static_cast<int>(in.memory_capacity_per_rank.size()) &&
        m.peak_memory_bytes[rank] > in.memory_capacity_per_rank[rank]) {
      m.oom_ranks.push_back(rank);
    }
  }
  return m;
}

}  // namespace stratasim
