#include "core/metrics.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "core/error.h"

namespace stratasim {
namespace {

bool IsCommunication(TaskKind k) {
  return k == TaskKind::kCollective || k == TaskKind::kSend || k == TaskKind::kRecv ||
         k == TaskKind::kCopy;
}

std::string CategoryOf(const Task& t) {
  return t.category.empty() ? std::string("other") : t.category.str();
}

}  // namespace

TraceMeter::TraceMeter(int num_ranks, MetricsInput in, std::vector<std::string> tracked,
                       std::vector<int> fold)
    : n_(num_ranks),
      in_(std::move(in)),
      first_(in_.warmup_iterations),
      last_(in_.warmup_iterations + in_.measured_iterations - 1),
      tracked_names_(std::move(tracked)),
      sets_(num_ranks, kFirstTracked + static_cast<int>(tracked_names_.size())),
      window_start_known_(in_.warmup_iterations == 0) {
  if (in_.measured_iterations < 1) throw Error("metrics need at least one measured iteration");
  const size_t n = static_cast<size_t>(n_);
  // A folded graph (TaskGraph::fold) simulates one representative per class of identical
  // ranks: each task of a representative stands for the ranks it represents, and a folded
  // rank's per-rank figures are its representative's. Mirror tasks on folded ranks move
  // traffic but stand for nothing.
  if (!fold.empty() && fold.size() != n) throw Error("metrics: the fold does not match the ranks");
  fold_ = std::move(fold);
  weight_.assign(n, fold_.empty() ? 1.0 : 0.0);
  for (size_t r = 0; r < n && !fold_.empty(); ++r) weight_[static_cast<size_t>(fold_[r])] += 1;
  iteration_end_.assign(static_cast<size_t>(last_) + 1, -1);
  model_flops_.assign(n, 0);
  hardware_flops_.assign(n, 0);
  exposed_.assign(n, 0);
  idle_.assign(n, 0);
  tracked_covered_.assign(tracked_names_.size(), std::vector<double>(n, 0));
  tracked_exposed_.assign(tracked_names_.size(), std::vector<double>(n, 0));
  mem_events_.resize(n);
  mem_current_.assign(n, 0);
  mem_peak_.assign(n, 0);
  mem_live_.resize(n);
  mem_at_peak_.resize(n);
  if (!in_.rank_stage.empty()) {
    if (in_.rank_stage.size() != n) throw Error("metrics: the stage map does not match the ranks");
    for (int st : in_.rank_stage) {
      if (st < 0) throw Error("metrics: a rank has a negative stage");
      last_stage_ = std::max(last_stage_, st);
    }
    busy_.assign(n, 0);
    first_forward_.assign(static_cast<size_t>(in_.measured_iterations), INFINITY);
    last_stage_forward_.assign(static_cast<size_t>(in_.measured_iterations), INFINITY);
  }
}

namespace {

// The FLOPs a compute task counts for MFU and HFU. A fused attention kernel counts the full
// s x s products as the unfused ones do, 4 b s^2 h forward and 8 b s^2 h backward (the model
// FLOPs of Narayanan et al. 2021, §5.1, which MFU is conventionally quoted in), not what it runs:
// a causal kernel skips half of them and its backward recomputes the scores (Task::flops,
// which times the kernel, has both).
double ModelFlops(const Task& t) {
  if (t.op != OpKind::kFusedAttention || !t.gemm.known()) return t.flops;
  const double products = 2 * t.gemm.batch * t.gemm.m * t.gemm.n * t.gemm.k;  // one of two
  return (t.phase == Phase::kBackward ? 4 : 2) * products;
}

}  // namespace

void TraceMeter::Add(const Task& task, const TraceRecord& r) {
  // In iteration order, the first task of the first measured iteration means the one before
  // has ended: the window's start is known.
  highest_iteration_ = std::max(highest_iteration_, task.iteration);
  if (highest_iteration_ >= first_) window_start_known_ = true;
  if (task.iteration >= 0 && task.iteration <= last_) {
    double& end = iteration_end_[static_cast<size_t>(task.iteration)];
    end = std::max(end, r.end_s);
    if (task.iteration >= first_ && task.kind == TaskKind::kCompute) {
      if (task.phase == Phase::kForward || task.phase == Phase::kBackward) {
        model_flops_[static_cast<size_t>(task.rank)] += ModelFlops(task);
      } else if (task.phase == Phase::kRecompute) {
        hardware_flops_[static_cast<size_t>(task.rank)] += ModelFlops(task);
      }
    }
  }
  if (weight_[static_cast<size_t>(task.rank)] == 0) return;
  if (task.kind == TaskKind::kMemory) {
    mem_events_[static_cast<size_t>(task.rank)].push_back(
        {r.start_s, task.memory_delta_bytes, task.category});
    return;
  }
  if (task.kind == TaskKind::kCompute) {
    sets_.Add(kBusy, task.rank, {r.start_s, r.end_s});
    if (last_stage_ >= 0 && task.phase == Phase::kForward && task.iteration >= first_ &&
        task.iteration <= last_) {
      const size_t k = static_cast<size_t>(task.iteration - first_);
      first_forward_[k] = std::min(first_forward_[k], r.start_s);
      if (in_.rank_stage[static_cast<size_t>(task.rank)] == last_stage_) {
        last_stage_forward_[k] = std::min(last_stage_forward_[k], r.start_s);
      }
    }
    return;
  }
  for (size_t i = 0; i < tracked_names_.size() && !task.category.empty(); ++i) {
    if (task.category == tracked_names_[i]) {
      sets_.Add(kFirstTracked + static_cast<int>(i), task.rank, {r.start_s, r.end_s});
    }
  }
  if (!IsCommunication(task.kind)) return;
  // Communicating from the moment every peer had joined: waiting for peers is not.
  const Interval active{std::max(r.start_s, r.peers_joined_s), r.end_s};
  sets_.Add(kComm, task.rank, active);
  const std::string category = CategoryOf(task);
  auto it = category_set_.find(category);
  if (it == category_set_.end()) {
    it = category_set_.emplace(category, sets_.AddSet()).first;
    exposed_of_[category].assign(static_cast<size_t>(n_), 0);
  }
  sets_.Add(it->second, task.rank, active);
}

double TraceMeter::WindowStart() const {
  return first_ > 0 ? iteration_end_[static_cast<size_t>(first_) - 1] : 0.0;
}

void TraceMeter::Seal(double safe_s) {
  if (!(safe_s > sealed_)) return;
  if (window_start_known_) {
    Measure(std::max(sealed_, WindowStart()), safe_s);
  } else {
    // The window starts when the last warm-up iteration ends, which it has not: after now,
    // so after `safe_s`. What lies before is outside it.
    sets_.Seal(safe_s, [](int, const std::vector<std::vector<Interval>>&) {});
  }
  ApplyMemory(safe_s);
  sealed_ = safe_s;
}

// Adds each rank's figures over [lo, hi) and drops the intervals before hi.
void TraceMeter::Measure(double lo, double hi) {
  std::vector<Interval> working;
  sets_.Seal(hi, [&](int rank, const std::vector<std::vector<Interval>>& sets) {
    if (!(hi > lo)) return;
    const size_t r = static_cast<size_t>(rank);
    const std::vector<Interval>& computing = sets[kBusy];
    if (!busy_.empty()) busy_[r] += CoveredLength(computing, lo, hi);
    exposed_[r] += ExclusiveLength(sets[kComm], computing, lo, hi);
    for (const auto& [category, index] : category_set_) {
      exposed_of_[category][r] +=
          ExclusiveLength(sets[static_cast<size_t>(index)], computing, lo, hi);
    }
    working.assign(computing.begin(), computing.end());
    working.insert(working.end(), sets[kComm].begin(), sets[kComm].end());
    idle_[r] += (hi - lo) - CoveredLength(Union(working), lo, hi);
    for (size_t i = 0; i < tracked_names_.size(); ++i) {
      const std::vector<Interval>& set = sets[kFirstTracked + i];
      tracked_covered_[i][r] += CoveredLength(set, lo, hi);
      tracked_exposed_[i][r] += ExclusiveLength(set, computing, lo, hi);
    }
  });
}

// Applies the memory events before `before` in time order. At equal times frees apply before
// allocations (a buffer released and another taken at the same instant do not coexist);
// stable so that equal events keep the order they came in.
void TraceMeter::ApplyMemory(double before) {
  for (size_t r = 0; r < mem_events_.size(); ++r) {
    std::vector<MemoryEvent>& events = mem_events_[r];
    if (events.empty()) continue;
    std::stable_sort(events.begin(), events.end(), [](const MemoryEvent& a, const MemoryEvent& b) {
      if (a.time != b.time) return a.time < b.time;
      return a.delta < 0 && b.delta >= 0;
    });
    size_t i = 0;
    for (; i < events.size() && events[i].time < before; ++i) {
      const MemoryEvent& e = events[i];
      mem_current_[r] += e.delta;
      mem_live_[r][e.category.empty() ? std::string("other") : e.category.str()] += e.delta;
      if (mem_current_[r] > mem_peak_[r]) {
        mem_peak_[r] = mem_current_[r];
        mem_at_peak_[r] = mem_live_[r];
      }
    }
    events.erase(events.begin(), events.begin() + static_cast<long>(i));
  }
}

Measured TraceMeter::Finish(const std::vector<int>& fold) {
  for (int i = 0; i <= last_; ++i) {
    if (iteration_end_[static_cast<size_t>(i)] < 0) {
      throw Error("iteration " + std::to_string(i) + " has no tasks");
    }
  }
  if (fold != fold_) throw Error("metrics: the plan's fold changed after its first task");
  const double window_start = WindowStart();
  const double window_end = iteration_end_[static_cast<size_t>(last_)];
  const double window = window_end - window_start;
  if (window <= 0) throw Error("the measured iterations took no time");
  Measure(std::max(sealed_, window_start), window_end);
  ApplyMemory(INFINITY);
  sealed_ = INFINITY;

  const int n = n_;
  auto representative = [&](int r) { return fold.empty() ? r : fold[static_cast<size_t>(r)]; };
  const std::vector<double>& weight = weight_;
  auto weighted = [&](const std::vector<double>& per_rank) {
    double sum = 0;
    for (size_t r = 0; r < per_rank.size(); ++r) sum += weight[r] * per_rank[r];
    return sum;
  };

  Measured out;
  out.iteration_end_s = iteration_end_;
  out.window_start_s = window_start;
  out.window_end_s = window_end;
  Metrics& m = out.metrics;
  const double model_flops = weighted(model_flops_);
  const double hardware_flops = model_flops + weighted(hardware_flops_);
  m.iteration_time_s = window / in_.measured_iterations;
  m.samples_per_s = in_.samples_per_iteration / m.iteration_time_s;
  m.tokens_per_s = m.samples_per_s * in_.tokens_per_sample;
  m.model_flops_per_iteration = model_flops / in_.measured_iterations;
  const double achieved = m.model_flops_per_iteration / m.iteration_time_s;
  m.tflops_per_gpu = n > 0 ? achieved / n / 1e12 : 0;
  double peak_sum = 0;
  for (double p : in_.peak_flops_per_rank) peak_sum += p;
  m.mfu = peak_sum > 0 ? achieved / peak_sum : 0;
  m.hfu =
      peak_sum > 0 ? hardware_flops / in_.measured_iterations / m.iteration_time_s / peak_sum : 0;
  m.exposed_comm_fraction = n > 0 ? weighted(exposed_) / n / window : 0;
  m.idle_fraction = n > 0 ? weighted(idle_) / n / window : 0;
  for (const auto& [category, per_rank] : exposed_of_) {
    m.exposed_comm_by_category[category] = n > 0 ? weighted(per_rank) / n / window : 0;
  }
  for (size_t i = 0; i < tracked_names_.size(); ++i) {
    out.tracked[tracked_names_[i]] =
        CategoryTime{weighted(tracked_covered_[i]), weighted(tracked_exposed_[i])};
  }

  m.peak_memory_bytes.assign(static_cast<size_t>(n), 0);
  m.peak_memory_breakdown.assign(static_cast<size_t>(n), {});
  m.memory_capacity_bytes = in_.memory_capacity_per_rank;
  for (int rank = 0; rank < n; ++rank) {
    const size_t rep = static_cast<size_t>(representative(rank));
    m.peak_memory_bytes[static_cast<size_t>(rank)] = mem_peak_[rep];
    // Categories fully freed by the peak add nothing to its explanation.
    std::map<std::string, double>& at_peak = m.peak_memory_breakdown[static_cast<size_t>(rank)];
    for (const auto& [category, bytes] : mem_at_peak_[rep]) {
      if (bytes > 0.5) at_peak[category] = bytes;  // < 1 byte: rounding
    }
    if (rank < static_cast<int>(in_.memory_capacity_per_rank.size()) &&
        m.peak_memory_bytes[static_cast<size_t>(rank)] >
            in_.memory_capacity_per_rank[static_cast<size_t>(rank)]) {
      m.oom_ranks.push_back(rank);
    }
  }
  if (last_stage_ >= 0) MeasureStages(fold, window, &m);
  return out;
}

// The per-stage figures of a pipelined plan (Metrics::stage_compute_s and what follows it).
void TraceMeter::MeasureStages(const std::vector<int>& fold, double window, Metrics* m) const {
  auto representative = [&](int r) { return fold.empty() ? r : fold[static_cast<size_t>(r)]; };
  const size_t stages = static_cast<size_t>(last_stage_) + 1;
  m->stage_compute_s.assign(stages, 0);
  m->stage_bubble_fraction.assign(stages, 0);
  std::vector<int> ranks_of(stages, 0);
  for (int rank = 0; rank < n_; ++rank) {
    const size_t st = static_cast<size_t>(in_.rank_stage[static_cast<size_t>(rank)]);
    const double busy = busy_[static_cast<size_t>(representative(rank))];
    m->stage_compute_s[st] = std::max(m->stage_compute_s[st], busy / in_.measured_iterations);
    m->stage_bubble_fraction[st] += 1 - busy / window;
    ++ranks_of[st];
  }
  for (size_t st = 0; st < stages; ++st) {
    if (ranks_of[st] > 0) m->stage_bubble_fraction[st] /= ranks_of[st];
  }
  double startup = 0;
  int counted = 0;
  for (size_t k = 0; k < first_forward_.size(); ++k) {
    if (!std::isfinite(first_forward_[k]) || !std::isfinite(last_stage_forward_[k])) continue;
    startup += last_stage_forward_[k] - first_forward_[k];
    ++counted;
  }
  m->startup_s = counted > 0 ? startup / counted : 0;
}

Metrics ComputeMetrics(const TaskGraph& g, const ExecutionTrace& t, const MetricsInput& in) {
  if (t.records.size() != g.tasks().size()) {
    throw Error("trace has " + std::to_string(t.records.size()) + " records for a graph of " +
                std::to_string(g.tasks().size()) + " tasks");
  }
  TraceMeter meter(g.num_ranks(), in, {}, g.fold());
  for (const Task& task : g.tasks()) meter.Add(task, t.records[static_cast<size_t>(task.id)]);
  return meter.Finish(g.fold()).metrics;
}

}  // namespace stratasim
