#include "strategies/async/staleness.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"

namespace stratasim {

StalenessFigures MeasureStaleness(const TaskGraph& g, const ExecutionTrace& trace) {
  if (trace.records.size() != g.tasks().size()) {
    throw Error("staleness: the trace has " + std::to_string(trace.records.size()) +
                " records for " + std::to_string(g.tasks().size()) + " tasks");
  }
  // [rank][iteration]: first forward start, last backward end.
  std::map<int, std::map<int, double>> start, done;
  for (const Task& t : g.tasks()) {
    const TraceRecord& r = trace.records.at(static_cast<size_t>(t.id - g.first_live()));
    if (t.phase == Phase::kForward) {
      auto [it, fresh] = start[t.rank].emplace(t.iteration, r.start_s);
      if (!fresh) it->second = std::min(it->second, r.start_s);
    } else if (t.phase == Phase::kBackward) {
      auto [it, fresh] = done[t.rank].emplace(t.iteration, r.end_s);
      if (!fresh) it->second = std::max(it->second, r.end_s);
    }
  }
  StalenessFigures f;
  for (const auto& [rank, unused] : start) f.workers.push_back(rank);
  // Iterations every worker had finished by `time`.
  auto finished_by_all = [&](double time) {
    int least = -1;
    for (const auto& [rank, ends] : done) {
      int n = 0;
      while (ends.count(n) > 0 && ends.at(n) <= time) ++n;
      least = least < 0 ? n : std::min(least, n);
    }
    return std::max(least, 0);
  };
  double gap_sum = 0;
  int gaps = 0;
  for (const auto& [rank, starts] : start) {
    for (const auto& [iteration, at] : starts) {
      f.max_iterations_ahead = std::max(f.max_iterations_ahead, iteration - finished_by_all(at));
      auto prev = done[rank].find(iteration - 1);
      if (prev == done[rank].end()) continue;
      const double gap = at - prev->second;
      gap_sum += gap;
      f.max_gap_s = std::max(f.max_gap_s, gap);
      ++gaps;
    }
  }
  f.mean_gap_s = gaps > 0 ? gap_sum / gaps : 0;
  return f;
}

}  // namespace stratasim
