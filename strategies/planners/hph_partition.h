// HPH's partition (CLUSTER'22): the blocks split into contiguous stages so that the slowest
// stage, timed on its own GPU kind, is as fast as it can be, with recomputation only where a
// stage would otherwise run out of memory.
//
// A min-max dynamic programme over the stages in their pipeline order:
//   best[s][j] = min over i of max(best[s-1][i], cost(s, i, j)),
// where cost(s, i, j) is the forward + backward time of blocks [i, j) on stage s's kind, plus the
// recomputation of the fewest blocks that make the stage fit in its memory with 1F1B's
// min(stages - s, micro_batches) micro-batches in flight (FewestRecomputed); a range that cannot
// fit even fully recomputed costs infinity, so a plan that does not fit is never chosen. The
// recomputation is counted in full here: the schedule may hide it in the stage's bubbles
// (hph.h), which this bound does not rely on.
#ifndef STRATASIM_STRATEGIES_PLANNERS_HPH_PARTITION_H_
#define STRATASIM_STRATEGIES_PLANNERS_HPH_PARTITION_H_

#include <optional>
#include <vector>

#include "strategies/planners/planner.h"

namespace stratasim::planners {

// The fewest recomputable blocks of [first, end) whose recomputation makes a GPU of `kind` with
// `in_flight` micro-batches in flight fit in `budget` bytes (StageMemoryBytes), the blocks that
// save the most activation bytes first; empty when it fits as it is, nullopt when it cannot fit.
std::optional<std::vector<int>> FewestRecomputed(const CostProfile& profile, int kind, int first,
                                                 int end, int in_flight, double budget);

struct StagePartition {
  bool fits = false;                  // false: no split fits in memory (the other fields are empty)
  std::vector<int> bounds;            // stages + 1 entries
  std::vector<bool> recompute;        // per block
  std::vector<double> stage_seconds;  // forward + backward + recomputation, per micro-batch
  std::vector<double> stage_memory;   // predicted peak bytes per GPU of each stage
  std::vector<int> stage_recomputed;  // blocks each stage recomputes
  double max_seconds = 0;             // the largest stage_seconds
};

// The split of the profile's blocks over stage_kind.size() stages. `balance_kind[s]`: the kind
// whose times stage s is balanced with (stage_kind for HPH's speed-weighted split; one kind for
// every stage for a speed-blind even split); `stage_kind[s]`, `budget[s]`: the kind and the
// bytes stage s really has, for its memory and its reported time. `recompute`: false never
// recomputes (a stage that does not fit is infeasible).
StagePartition PartitionStages(const CostProfile& profile, const std::vector<int>& balance_kind,
                               const std::vector<int>& stage_kind,
                               const std::vector<double>& budget, int micro_batches,
                               bool recompute);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_HPH_PARTITION_H_
