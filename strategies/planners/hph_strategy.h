// Strategy kind `hph`: HPH's planner (hph.h) on a scenario. The options every planner shares
// (planner_options.h) give the degrees; HPH's own choose which of its mechanisms run, so that
// each can be compared with its absence: `mapping` (the topology designer or the lowering's
// default order), `partition` (speed-weighted or even) and `recompute` (only where memory would
// overflow, or never). The plan is lowered with the pipeline lowering (lower_plan.h).
#ifndef STRATASIM_STRATEGIES_PLANNERS_HPH_STRATEGY_H_
#define STRATASIM_STRATEGIES_PLANNERS_HPH_STRATEGY_H_

#include "strategies/plan.h"

namespace stratasim {

Plan PlanHphStrategy(const Scenario& s, const StrategySpec& spec);
const OptionSpecs& HphOptions();

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PLANNERS_HPH_STRATEGY_H_
