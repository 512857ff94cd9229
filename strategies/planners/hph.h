// HPH, Hybrid Parallelism on Heterogeneous clusters (CLUSTER'22): data x pipeline parallelism on
// a cluster of several GPU kinds. Three mechanisms:
//   1. a topology designer (hph_topology.h): each stage's replicas on the fastest links, stage
//      boundaries across the slower ones, one GPU kind per stage where possible;
//   2. a partition that maximises throughput (hph_partition.h): each stage's blocks timed on its
//      own GPU kind, the slowest stage made as fast as it can be;
//   3. recomputation-aware scheduling: only the stages that would otherwise run out of memory
//      recompute, as few blocks as they need, and the schedule re-runs a micro-batch's forward
//      while the stage waits for its gradient, in the 1F1B bubbles, so that the recomputation
//      leaves the critical path where the bubbles are long enough.
// The planner tries the designer's layouts (one per order of the GPU kinds over the stages) and
// keeps the one with the lowest predicted iteration among those that fit in memory.
#ifndef STRATASIM_STRATEGIES_PLANNERS_HPH_H_
#define STRATASIM_STRATEGIES_PLANNERS_HPH_H_

#include <string>

#include "strategies/planners/planner.h"

namespace stratasim::planners {

struct HphSettings {
  // false: the lowering's rank order `rank_order` (strategies/parallel_layout.h) instead of the
  // designer's layout, for comparison.
  bool topology = true;
  std::string rank_order = "tpd";
  // false: only the designer's layouts that a rank order numbers (RankOrderOf, hph_topology.h),
  // for a lowering that takes no explicit stage-to-GPU mapping; the default layout when none is.
  bool explicit_ranks = true;
  // false: the blocks balanced as if every stage had the cluster's first GPU kind (a speed-blind
  // split), for comparison.
  bool speed_weighted = true;
  // false: never recompute; a stage that does not fit makes the plan infeasible.
  bool recompute = true;
  // The schedule of a plan in which some stage recomputes: one that runs the recomputation
  // before the gradient arrives ("pre_recompute") where the lowering has it, else "1f1b".
  std::string recompute_schedule = "1f1b";
};

// The plan for `in` (planner.h): its ranks are the designer's (explicit) with `topology`, else
// empty (the lowering's own order). Throws stratasim::Error when the input is inconsistent or when
// no layout and split fits in memory, even recomputing every recomputable block.
PlannedPipeline PlanHph(const PlannerInput& in, const HphSettings& settings = {});

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_HPH_H_
