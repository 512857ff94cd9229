// Strategy kinds `dapple` and `piper`: the baseline planners of the studied papers (dapple.h,
// piper.h) over a scenario. Each reads the options every planner shares (planner_options.h)
// plus its own, builds the cost profile of the model's sub-layer blocks (profile.h), plans, and
// lowers the plan with the pipeline/3D lowering (lower_plan.h); the simulator measures it.
#ifndef STRATASIM_STRATEGIES_PLANNERS_BASELINES_H_
#define STRATASIM_STRATEGIES_PLANNERS_BASELINES_H_

#include "core/strategy_options.h"
#include "strategies/plan.h"

namespace stratasim::planners {

const OptionSpecs& DappleOptions();
Plan PlanDappleStrategy(const Scenario& s, const StrategySpec& spec);

const OptionSpecs& PiperOptions();
Plan PlanPiperStrategy(const Scenario& s, const StrategySpec& spec);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_BASELINES_H_
