// AutoPipe (CLUSTER'22; docs/strategies.md, "autopipe"): a balanced sub-layer partition found by
// a search around the critical stage of a simulated 1F1B (autopipe_partition.h), seeded by a
// min-max dynamic program, and a micro-batch slicer that halves the first micro-batches to cut
// the pipeline's start-up; the planner picks how many from the same simulation.
#ifndef STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_H_
#define STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_H_

#include "strategies/planners/autopipe_partition.h"
#include "strategies/planners/planner.h"
#include "strategies/planners/stage_placement.h"

namespace stratasim::planners {

struct AutoPipeSettings {
  PartitionSettings partition;
  bool slicer = true;
  // Micro-batches the slicer may halve at most; -1: stages - 1, the micro-batches of the
  // start-up (with block times that scale with size, halving more would only ever look better,
  // as if more micro-batches cost nothing).
  int max_sliced = -1;
  // Costs of micro-batches of half the size (profile.micro_batch / 2 samples): the same blocks
  // and kinds. Empty: half the full-size times and bytes (block times scale with size).
  CostProfile half_profile;
};

// Plans with the default rank order. Throws stratasim::Error when the input is inconsistent or
// no partition fits in memory.
PlannedPipeline PlanAutoPipe(const PlannerInput& in, const AutoPipeSettings& settings = {});

// The partition, recomputation and slicing for the GPUs of `place` (AutoPipe-H's mapping);
// ranks and planning_seconds are the caller's.
PlannedPipeline PlanAutoPipeOn(const PlannerInput& in, const StagePlacement& place,
                               const AutoPipeSettings& settings);

// "12.345 ms": seconds as the planners' notes print them.
std::string Millis(double seconds);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_H_
