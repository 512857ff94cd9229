// The strategy kinds `autopipe` and `autopipe-h` (strategies/plan.cpp): their options, and a
// plan from a scenario through the planners (autopipe.h, autopipe_h.h), the profile of the
// model's sub-layer blocks (profile.h) and the pipeline lowering (lower_plan.h).
#ifndef STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_STRATEGY_H_
#define STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_STRATEGY_H_

#include "core/strategy_options.h"
#include "strategies/plan.h"

namespace stratasim {

const OptionSpecs& AutoPipeOptions();
const OptionSpecs& AutoPipeHOptions();

Plan PlanAutoPipeStrategy(const Scenario& s, const StrategySpec& spec);
Plan PlanAutoPipeHStrategy(const Scenario& s, const StrategySpec& spec);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_STRATEGY_H_
