// HPH's speed-weighted partition with memory-driven recomputation (hph_partition.h).
#include "strategies/planners/hph_partition.h"

#include <algorithm>
#include <limits>

namespace stratasim::planners {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The recomputation the cost of a range needs, with its seconds.
struct RangeCost {
  double seconds = kInfinity;
  std::vector<int> recomputed;
};

RangeCost CostOf(const CostProfile& profile, int balance_kind, int kind, int first, int end,
                 int in_flight, double budget, bool allow_recompute) {
  RangeCost c;
  std::optional<std::vector<int>> r =
      allow_recompute ? FewestRecomputed(profile, kind, first, end, in_flight, budget)
      : StageMemoryBytes(profile, kind, first, end, in_flight) <= budget
          ? std::optional<std::vector<int>>(std::vector<int>{})
          : std::nullopt;
  if (!r) return c;
  c.recomputed = std::move(*r);
  c.seconds = RangeSeconds(profile.costs[balance_kind], first, end);
  for (int b : c.recomputed) c.seconds += profile.costs[balance_kind][b].recompute_s;
  return c;
}

}  // namespace

std::optional<std::vector<int>> FewestRecomputed(const CostProfile& profile, int kind, int first,
                                                 int end, int in_flight, double budget) {
  const std::vector<BlockCost>& costs = profile.costs[kind];
  double params = 0, kept = 0;
  std::vector<int> candidates;
  for (int i = first; i < end; ++i) {
    params += costs[i].params;
    kept += costs[i].activation_bytes;
    if (costs[i].recomputable && costs[i].activation_bytes > costs[i].checkpoint_bytes) {
      candidates.push_back(i);
    }
  }
  const double states = params * profile.state_bytes_per_param;
  double largest = 0;  // the largest re-created activation, held while its backward runs
  std::vector<int> chosen;
  if (states + in_flight * kept <= budget) return chosen;
  // The most bytes saved first, so the fewest blocks; ties in block order, for determinism.
  std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
    return costs[a].activation_bytes - costs[a].checkpoint_bytes >
           costs[b].activation_bytes - costs[b].checkpoint_bytes;
  });
  for (int b : candidates) {
    kept -= costs[b].activation_bytes - costs[b].checkpoint_bytes;
    largest = std::max(largest, costs[b].activation_bytes);
    chosen.push_back(b);
    if (states + in_flight * kept + largest <= budget) {
      std::sort(chosen.begin(), chosen.end());
      return chosen;
    }
  }
  return std::nullopt;
}

StagePartition PartitionStages(const CostProfile& profile, const std::vector<int>& balance_kind,
                               const std::vector<int>& stage_kind,
                               const std::vector<double>& budget, int micro_batches,
                               bool recompute) {
  const int stages = static_cast<int>(stage_kind.size());
  const int blocks = profile.Blocks();
  StagePartition out;
  if (stages < 1 || blocks < stages) return out;
  // best[s][j]: the smallest largest cost of blocks [0, j) over stages 0..s; from[s][j]: the
  // first block of stage s in that split.
  std::vector<std::vector<double>> best(stages, std::vector<double>(blocks + 1, kInfinity));
  std::vector<std::vector<int>> from(stages, std::vector<int>(blocks + 1, -1));
  auto in_flight = [&](int s) { return std::min(stages - s, micro_batches); };
  for (int s = 0; s < stages; ++s) {
    // Stage s ends at j, leaving at least one block to each later stage.
    for (int j = s + 1; j <= blocks - (stages - s - 1); ++j) {
      for (int i = s; i < j; ++i) {
        const double before = s == 0 ? (i == 0 ? 0 : kInfinity) : best[s - 1][i];
        if (before == kInfinity || before >= best[s][j]) continue;
        const RangeCost c = CostOf(profile, balance_kind[s], stage_kind[s], i, j, in_flight(s),
                                   budget[s], recompute);
        const double worst = std::max(before, c.seconds);
        if (worst < best[s][j]) {
          best[s][j] = worst;
          from[s][j] = i;
        }
      }
    }
  }
  if (best[stages - 1][blocks] == kInfinity) return out;
  out.fits = true;
  out.bounds.assign(stages + 1, 0);
  out.bounds[stages] = blocks;
  for (int s = stages - 1; s > 0; --s) out.bounds[s] = from[s][out.bounds[s + 1]];
  out.recompute.assign(blocks, false);
  for (int s = 0; s < stages; ++s) {
    const int first = out.bounds[s], end = out.bounds[s + 1];
    const RangeCost c = CostOf(profile, stage_kind[s], stage_kind[s], first, end, in_flight(s),
                               budget[s], recompute);
    for (int b : c.recomputed) out.recompute[b] = true;
    out.stage_seconds.push_back(c.seconds);
    out.stage_recomputed.push_back(static_cast<int>(c.recomputed.size()));
    out.stage_memory.push_back(
        StageMemoryBytes(profile, stage_kind[s], first, end, in_flight(s), out.recompute));
    out.max_seconds = std::max(out.max_seconds, c.seconds);
  }
  return out;
}

}  // namespace stratasim::planners
