// A simulated 1F1B of per-stage times (autopipe_sim.h).
#include "strategies/planners/autopipe_sim.h"

#include <algorithm>

#include "core/error.h"

namespace stratasim::planners {
namespace {

struct Op {
  bool backward = false;
  int micro_batch = 0;
};

// 1F1B's order on stage s of S with M micro-batches.
std::vector<Op> StageOrder(int s, int stages, int m) {
  const int warmup = std::min(stages - s - 1, m);
  std::vector<Op> ops;
  for (int k = 0; k < warmup; ++k) ops.push_back({false, k});
  for (int k = warmup; k < m; ++k) {
    ops.push_back({false, k});
    ops.push_back({true, k - warmup});
  }
  for (int k = m - warmup; k < m; ++k) ops.push_back({true, k});
  return ops;
}

void Check(const StageTimes& t, bool halves) {
  const size_t s = t.forward.size();
  bool ok = s > 0 && t.backward.size() == s && t.send.size() == s - 1;
  if (halves) {
    ok = ok && t.half_forward.size() == s && t.half_backward.size() == s &&
         t.half_send.size() == s - 1;
  }
  if (!ok) throw Error("Simulate1F1B: stage times of inconsistent sizes");
}

}  // namespace

Simulated1F1B Simulate1F1B(const StageTimes& t, const std::vector<bool>& halved) {
  const bool halves = std::find(halved.begin(), halved.end(), true) != halved.end();
  Check(t, halves);
  const int stages = t.Stages();
  const int m = static_cast<int>(halved.size());
  auto fwd = [&](int s, int k) { return halved[k] ? t.half_forward[s] : t.forward[s]; };
  auto bwd = [&](int s, int k) { return halved[k] ? t.half_backward[s] : t.backward[s]; };
  auto send = [&](int s, int k) { return halved[k] ? t.half_send[s] : t.send[s]; };

  constexpr double kNotYet = -1;
  std::vector<std::vector<double>> f_end(stages, std::vector<double>(m, kNotYet));
  std::vector<std::vector<double>> b_end = f_end;
  std::vector<std::vector<Op>> order(stages);
  std::vector<std::vector<double>> start(stages), end(stages);
  for (int s = 0; s < stages; ++s) order[s] = StageOrder(s, stages, m);

  // Advance every stage as far as its dependencies allow until all ops ran; 1F1B's orders
  // are deadlock-free, so each sweep makes progress.
  std::vector<size_t> next(stages, 0);
  std::vector<double> free_at(stages, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < stages; ++s) {
      while (next[s] < order[s].size()) {
        const Op op = order[s][next[s]];
        const int k = op.micro_batch;
        double ready = 0;
        if (!op.backward && s > 0) {
          if (f_end[s - 1][k] == kNotYet) break;
          ready = f_end[s - 1][k] + send(s - 1, k);
        } else if (op.backward && s < stages - 1) {
          if (b_end[s + 1][k] == kNotYet) break;
          ready = b_end[s + 1][k] + send(s, k);
        }
        const double begin = std::max(ready, free_at[s]);
        const double finish = begin + (op.backward ? bwd(s, k) : fwd(s, k));
        (op.backward ? b_end : f_end)[s][k] = finish;
        start[s].push_back(begin);
        end[s].push_back(finish);
        free_at[s] = finish;
        ++next[s];
        progress = true;
      }
    }
  }

  Simulated1F1B r;
  r.steady_idle.assign(stages, 0);
  for (int s = 0; s < stages; ++s) {
    r.iteration = std::max(r.iteration, free_at[s]);
    int first_backward = -1, last_forward = -1;
    for (int i = 0; i < static_cast<int>(order[s].size()); ++i) {
      if (order[s][i].backward && first_backward < 0) first_backward = i;
      if (!order[s][i].backward) last_forward = i;
    }
    for (int i = first_backward + 1; first_backward >= 0 && i <= last_forward; ++i) {
      r.steady_idle[s] += start[s][i] - end[s][i - 1];
    }
  }
  if (m > 0) r.startup = start[stages - 1][0];
  // Idle below a part in 1e9 of the iteration is rounding, not a bubble.
  const double tolerance = 1e-9 * r.iteration;
  r.critical = stages - 1;
  for (int s = stages - 1; s >= 0; --s) {
    if (r.steady_idle[s] <= tolerance) {
      r.critical = s;
      return r;
    }
    if (r.steady_idle[s] < r.steady_idle[r.critical]) r.critical = s;
  }
  return r;
}

Simulated1F1B Simulate1F1B(const StageTimes& t, int micro_batches) {
  return Simulate1F1B(t, std::vector<bool>(std::max(micro_batches, 0), false));
}

}  // namespace stratasim::planners
