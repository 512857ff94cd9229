// AutoPipe's partitioner: the min-max seed and the search around the critical stage
// (autopipe_partition.h).
#include "strategies/planners/autopipe_partition.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <set>
#include <string>

#include "core/error.h"

namespace stratasim::planners {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The distinct kinds of a stage's GPUs, in increasing order.
std::vector<int> KindsOf(const StagePlacement& place, int stage) {
  std::vector<int> kinds;
  for (const StagePlacement::Gpu& g : place.gpus[stage]) kinds.push_back(g.kind);
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  return kinds;
}

bool Recomputed(const std::vector<bool>& recompute, int block) {
  return block < static_cast<int>(recompute.size()) && recompute[block];
}

// The min-max dynamic program over prefix sums: best[j][p] is the smallest largest stage time
// (forward + backward) of blocks [0, j) cut into stages 0..p-1, each timed on its slowest kind.
class MinMaxSplit {
 public:
  MinMaxSplit(const CostProfile& profile, const StagePlacement& place) {
    const int blocks = profile.Blocks(), stages = place.Stages();
    for (int s = 0; s < stages; ++s) kinds_.push_back(KindsOf(place, s));
    for (const std::vector<BlockCost>& costs : profile.costs) prefix_.push_back(PrefixTimes(costs));
    best_.assign(blocks + 1, std::vector<double>(stages + 1, kInf));
    best_[0][0] = 0;
    for (int j = 1; j <= blocks; ++j) {
      for (int p = 1; p <= std::min(j, stages); ++p) {
        for (int i = p - 1; i < j; ++i) {
          best_[j][p] = std::min(best_[j][p], Split(i, j, p));
        }
      }
    }
  }

  // Bounds of blocks [0, end) cut into `stages` stages by the program; `late` breaks ties
  // towards the latest last cut (smaller later stages), otherwise the earliest.
  std::vector<int> Bounds(int end, int stages, bool late) const {
    std::vector<int> bounds(stages + 1, 0);
    bounds[stages] = end;
    for (int p = stages, j = end; p >= 1; --p) {
      int cut = -1;
      for (int i = p - 1; i < j; ++i) {
        if (Split(i, j, p) == best_[j][p]) {
          cut = i;
          if (!late) break;
        }
      }
      bounds[p - 1] = cut;
      j = cut;
    }
    return bounds;
  }

 private:
  // max(best[i][p-1], time of blocks [i, j) as stage p - 1).
  double Split(int i, int j, int p) const {
    double t = 0;
    for (int k : kinds_[p - 1]) t = std::max(t, prefix_[k][j] - prefix_[k][i]);
    return std::max(best_[i][p - 1], t);
  }

  std::vector<std::vector<int>> kinds_;
  std::vector<std::vector<double>> prefix_;
  std::vector<std::vector<double>> best_;
};

// Recomputes blocks of stage s (largest activation saving first, then the lowest index) until
// each of its GPUs holds it with 1F1B's S - s micro-batches in flight; false if none suffices.
bool FitStage(const CostProfile& profile, const StagePlacement& place, int s, int first, int end,
              bool allow, std::vector<bool>& recompute) {
  const int in_flight = place.Stages() - s;
  for (const StagePlacement::Gpu& g : place.gpus[s]) {
    while (StageMemoryBytes(profile, g.kind, first, end, in_flight, recompute) > g.memory_bytes) {
      if (!allow) return false;
      int pick = -1;
      double saving = 0;
      for (int i = first; i < end; ++i) {
        const BlockCost& b = profile.costs[g.kind][i];
        if (!b.recomputable || Recomputed(recompute, i)) continue;
        const double save = b.activation_bytes - b.checkpoint_bytes;
        if (pick < 0 || save > saving) pick = i, saving = save;
      }
      if (pick < 0) return false;
      recompute[pick] = true;
    }
  }
  return true;
}

}  // namespace

std::vector<int> EvenBounds(int blocks, int stages) {
  std::vector<int> bounds(stages + 1, 0);
  for (int s = 0; s < stages; ++s) {
    bounds[s + 1] = bounds[s] + blocks / stages + (s < blocks % stages ? 1 : 0);
  }
  return bounds;
}

StageTimes TimesOf(const CostProfile& profile, const StagePlacement& place,
                   const std::vector<int>& bounds, const std::vector<bool>& recompute) {
  const int stages = place.Stages();
  StageTimes t;
  t.forward.assign(stages, 0);
  t.backward.assign(stages, 0);
  for (int s = 0; s < stages; ++s) {
    for (int k : KindsOf(place, s)) {
      const std::vector<BlockCost>& costs = profile.costs[k];
      double f = 0, b = 0;
      for (int i = bounds[s]; i < bounds[s + 1]; ++i) {
        f += costs[i].forward_s;
        b += costs[i].backward_s + (Recomputed(recompute, i) ? costs[i].recompute_s : 0);
      }
      t.forward[s] = std::max(t.forward[s], f);
      t.backward[s] = std::max(t.backward[s], b);
    }
  }
  for (int s = 0; s + 1 < stages; ++s) {
    const double bytes = profile.costs[place.gpus[s].front().kind][bounds[s + 1] - 1].output_bytes;
    const double bps = place.send_Bps[s];
    t.send.push_back(place.send_latency[s] + (bps > 0 ? bytes / bps : 0));
  }
  return t;
}

StagePlan EvaluatePartition(const CostProfile& profile, const StagePlacement& place,
                            const std::vector<int>& bounds, int micro_batches, bool recompute) {
  StagePlan plan;
  plan.bounds = bounds;
  plan.recompute.assign(profile.Blocks(), false);
  plan.fits = true;
  for (int s = 0; s < place.Stages(); ++s) {
    plan.stage_fits.push_back(
        FitStage(profile, place, s, bounds[s], bounds[s + 1], recompute, plan.recompute));
    plan.fits = plan.fits && plan.stage_fits.back();
  }
  if (std::find(plan.recompute.begin(), plan.recompute.end(), true) == plan.recompute.end()) {
    plan.recompute.clear();
  }
  plan.times = TimesOf(profile, place, bounds, plan.recompute);
  plan.simulated = Simulate1F1B(plan.times, micro_batches);
  return plan;
}

PartitionResult PartitionAutoPipe(const CostProfile& profile, const StagePlacement& place,
                                  int micro_batches, const PartitionSettings& settings) {
  const int blocks = profile.Blocks(), stages = place.Stages();
  if (stages < 1 || blocks < stages) {
    throw Error("autopipe: " + std::to_string(blocks) + " blocks cannot fill " +
                std::to_string(stages) + " stages");
  }
  const MinMaxSplit split(profile, place);
  auto evaluate = [&](const std::vector<int>& bounds) {
    return EvaluatePartition(profile, place, bounds, micro_batches, settings.recompute);
  };

  // Breadth-first from the seeds; a plan's neighbours are explored when it fits and is no
  // slower than the plan it came from (or that plan did not fit), so the search follows the
  // critical stage instead of enumerating every partition.
  struct Pending {
    std::vector<int> bounds;
    double parent_seconds = kInf;
  };
  std::deque<Pending> queue;
  std::set<std::vector<int>> seen;
  auto push = [&](std::vector<int> bounds, double parent) {
    if (seen.insert(bounds).second) queue.push_back({std::move(bounds), parent});
  };
  PartitionResult result;
  push(split.Bounds(blocks, stages, false), kInf);
  push(split.Bounds(blocks, stages, true), kInf);
  result.seed = evaluate(queue.front().bounds);
  result.best = result.seed;

  while (!queue.empty() && result.plans_evaluated < settings.max_plans) {
    const Pending cur = queue.front();
    queue.pop_front();
    const StagePlan plan = evaluate(cur.bounds);
    ++result.plans_evaluated;
    const double seconds = plan.fits ? plan.simulated.iteration : kInf;
    const bool better =
        plan.fits && (!result.best.fits || seconds < result.best.simulated.iteration);
    if (better) result.best = plan;
    if (!(seconds <= cur.parent_seconds || cur.parent_seconds == kInf)) continue;

    const std::vector<int>& b = plan.bounds;
    // A stage that does not fit in memory hands a block to each neighbour.
    for (int s = 0; s < stages; ++s) {
      if (plan.stage_fits[s] || b[s + 1] - b[s] < 2) continue;
      for (int j : {s, s + 1}) {
        if (j == 0 || j == stages) continue;
        std::vector<int> next = b;
        next[j] += j == s ? 1 : -1;
        push(std::move(next), seconds);
      }
    }
    const int c = plan.simulated.critical;
    const bool splittable = b[c + 1] - b[c] >= 2;
    // Move the critical stage's first block to the stages before it, re-split by the program.
    if (c > 0 && splittable) {
      for (bool late : {false, true}) {
        std::vector<int> next = split.Bounds(b[c] + 1, c, late);
        next.insert(next.end(), b.begin() + c + 1, b.end());
        push(std::move(next), seconds);
      }
    }
    // Move its last block to the stage after it, re-split the stages up to it.
    if (c + 1 < stages && splittable) {
      for (bool late : {false, true}) {
        std::vector<int> next = split.Bounds(b[c + 1] - 1, c + 1, late);
        next.insert(next.end(), b.begin() + c + 2, b.end());
        push(std::move(next), seconds);
      }
    }
    // The stages after the critical one have slack in 1F1B's cool-down: shift their cuts.
    for (int j = c + 1; j < stages; ++j) {
      for (int step : {-1, 1}) {
        std::vector<int> next = b;
        next[j] += step;
        if (next[j] > next[j - 1] && next[j] < next[j + 1]) push(std::move(next), seconds);
      }
    }
  }
  return result;
}

}  // namespace stratasim::planners
