// Lowers a PlannedPipeline (planner.h) to a task graph with the pipeline/3D lowering
// (strategies/pipeline/pipeline_lowering.h): the plan's block bounds become the chunk bounds
// over the sub-layer blocks (PlannerBlocks, profile.h), its recomputation the blocks'
// (models/recompute.h), its rank mapping the layout's, its micro-batch sizes the lowering's.
// The lowering's data-parallel all-reduces, transfers, memory and folding are the existing ones.
#ifndef STRATASIM_STRATEGIES_PLANNERS_LOWER_PLAN_H_
#define STRATASIM_STRATEGIES_PLANNERS_LOWER_PLAN_H_

#include <string>

#include "strategies/pipeline/pipeline_lowering.h"
#include "strategies/plan.h"
#include "strategies/planners/planner.h"

namespace stratasim::planners {

// `base`: the settings the plan does not decide (sequence parallelism, scatter/gather,
// data-parallel overlap and buckets; planner_options.h reads them). `planner`: the kind, for
// the notes and the report. Throws stratasim::Error when the plan is inconsistent (bounds,
// degrees, sizes).
Plan LowerPlannedPipeline(const Scenario& s, PipelineShape base, const PlannedPipeline& plan,
                          const std::string& planner);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_LOWER_PLAN_H_
