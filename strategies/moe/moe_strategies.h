// The four expert-parallel MoE training strategies (docs/strategies.md, docs/moe.md).
//
// deepspeed-moe (Rajbhandari et al., "DeepSpeed-MoE", ICML'22; deepspeed/moe/sharded_moe.py):
//   experts spread over the GPUs; the gate's capacity C = max(ceil(k cf S / E), min_capacity)
//   per source rank and expert; with drop_tokens the overflow is dropped, without it C is the
//   largest count (DeepSpeed all-reduces the max), so nothing is dropped and everything is
//   padded to the most loaded expert. Options:
//     dispatch       padded (default: DeepSpeed's [E, C, M] buffer with equal all-to-all splits,
//                    every slot computed) | routed (all-to-all-v of the routed counts).
//     drop_tokens    (default false) cap at the capacity and drop the overflow.
//     capacity_factor (default: the model's) and min_capacity (default 4).
//     algorithm      (default auto) all-to-all algorithm: auto | direct | pairwise.
// fastermoe (He et al., "FasterMoE", PPoPP'22): dynamic shadowing and smart scheduling.
//     shadowing      (default true) the performance-model shadowing policy, every iteration.
//     smart_schedule (default true) pairwise all-to-all steps overlapped with expert compute.
//     group_size     (default 4) workers per group of the pairwise exchange (must divide GPUs).
// prophet (Wang et al., "Prophet", CLUSTER'23): see prophet.h for what is assumed.
//     schedule       (default true) layer-wise scheduler; false: transfers exposed.
//     history        (default 0.5) weight of the newest iteration in the moving average.
// pro-prophet (Wang et al., "Pro-Prophet", arXiv 2411.10003):
//     schedule       (default true) block-wise scheduler; false: transfers exposed.
//     alpha          (default 3) stop when max - min device load < alpha * mean expert load.
// All of them also take the routing options of moe_setup.h.
#ifndef STRATASIM_STRATEGIES_MOE_MOE_STRATEGIES_H_
#define STRATASIM_STRATEGIES_MOE_MOE_STRATEGIES_H_

#include "strategies/plan.h"

namespace stratasim {

Plan PlanDeepSpeedMoe(const Scenario& s, const StrategySpec& spec);
Plan PlanFasterMoe(const Scenario& s, const StrategySpec& spec);
Plan PlanProphet(const Scenario& s, const StrategySpec& spec);
Plan PlanProProphet(const Scenario& s, const StrategySpec& spec);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_MOE_STRATEGIES_H_
