// The four expert-parallel MoE training strategies (docs/strategies.md, docs/moe.md).
//
// deepspeed-moe (Rajbhandari et al., "DeepSpeed-MoE", ICML'22; deepspeed/moe/sharded_moe.py):
//   experts spread over the GPUs; the gate's capacity C = max(ceil(k cf S / E), min_capacity)
//   per source rank and expert; with drop_tokens the overflow is dropped, without it C is the
//   largest count (DeepSpeed all-reduces the max), so nothing is dropped and everything is
//   padded to the most loaded expert.
// fastermoe (He et al., "FasterMoE", PPoPP'22): dynamic shadowing and smart scheduling.
// prophet (Wang et al., "Prophet", CLUSTER'23): see prophet.h for what is assumed.
// pro-prophet (Wang et al., "Pro-Prophet", arXiv 2411.10003): planner and block-wise scheduler.
// Options: each kind's *Options() below declares them; `stratasim strategies KIND` lists them.
#ifndef STRATASIM_STRATEGIES_MOE_MOE_STRATEGIES_H_
#define STRATASIM_STRATEGIES_MOE_MOE_STRATEGIES_H_

#include "strategies/plan.h"

namespace stratasim {

Plan PlanDeepSpeedMoe(const Scenario& s, const StrategySpec& spec);
Plan PlanFasterMoe(const Scenario& s, const StrategySpec& spec);
Plan PlanProphet(const Scenario& s, const StrategySpec& spec);
Plan PlanProProphet(const Scenario& s, const StrategySpec& spec);

// Each kind's options: MoeRoutingOptions() followed by its own.
const OptionSpecs& DeepSpeedMoeOptions();
const OptionSpecs& FasterMoeOptions();
const OptionSpecs& ProphetOptions();
const OptionSpecs& ProProphetOptions();

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_MOE_STRATEGIES_H_
