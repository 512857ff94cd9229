// AutoPipe's partitioner (CLUSTER'22; docs/strategies.md, "autopipe"): a min-max dynamic
// program over prefix sums of forward + backward block times seeds a breadth-first search around
// the critical stage of a simulated 1F1B (autopipe_sim.h). AutoPipe-H uses it with stages whose
// GPUs differ in kind: a stage's time is that of its slowest kind.
#ifndef STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_PARTITION_H_
#define STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_PARTITION_H_

#include <string>
#include <vector>

#include "strategies/planners/autopipe_sim.h"
#include "strategies/planners/planner.h"
#include "strategies/planners/stage_placement.h"

namespace stratasim::planners {

// One partition, evaluated.
struct StagePlan {
  std::vector<int> bounds;
  std::vector<bool> recompute;   // per block; empty: none
  bool fits = false;             // every stage's GPUs hold it (with `recompute`)
  std::vector<bool> stage_fits;  // per stage
  StageTimes times;              // full-size micro-batches
  Simulated1F1B simulated;
};

struct PartitionSettings {
  // Recompute blocks of a stage that would not fit otherwise (the fewest, largest activations
  // first); false: a stage that does not fit makes the partition unusable.
  bool recompute = true;
  int max_plans = 4096;  // partitions the search evaluates at most
};

struct PartitionResult {
  StagePlan seed;  // the dynamic program's
  StagePlan best;  // the fastest that fits; best.fits is false when none did
  int plans_evaluated = 0;
};

// Throws stratasim::Error when there are fewer blocks than stages.
PartitionResult PartitionAutoPipe(const CostProfile& profile, const StagePlacement& place,
                                  int micro_batches, const PartitionSettings& settings);

// Evaluates given bounds the way the search does (for the even split and for tests).
StagePlan EvaluatePartition(const CostProfile& profile, const StagePlacement& place,
                            const std::vector<int>& bounds, int micro_batches, bool recompute);

// Megatron-LM's even split of `blocks` into `stages` (the first ones one block longer).
std::vector<int> EvenBounds(int blocks, int stages);

// The stage times of `bounds` for micro-batches of `profile` (used with a half-size profile).
StageTimes TimesOf(const CostProfile& profile, const StagePlacement& place,
                   const std::vector<int>& bounds, const std::vector<bool>& recompute);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_PARTITION_H_
