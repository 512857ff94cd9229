// The options every planner strategy shares (autopipe, autopipe-h, merak, hph, dapple, piper):
// the degrees it plans for and the settings it does not decide. Each planner appends its own.
#ifndef STRATASIM_STRATEGIES_PLANNERS_PLANNER_OPTIONS_H_
#define STRATASIM_STRATEGIES_PLANNERS_PLANNER_OPTIONS_H_

#include "core/strategy_options.h"
#include "strategies/pipeline/pipeline_lowering.h"
#include "strategies/planners/profile.h"

namespace stratasim::planners {

// stages (>= 2), tensor (default 1), data (derived: GPUs / (tensor x stages)), micro_batches
// (derived from global_batch), sequence_parallel, scatter_gather, dp_overlap, bucket_size. A
// planner declares its options as static const OptionSpecs o = Join(PlannerOptions(), {...}).
const OptionSpecs& PlannerOptions();

// Reads and checks the options PlannerOptions() declares: the shape the lowering takes for what
// the plan does not decide (schedule 1f1b, partition empty) and the degrees for the profile.
PipelineShape ReadPlannerShape(const Scenario& s, OptionReader& opt, PlannerDegrees& degrees);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_PLANNER_OPTIONS_H_
