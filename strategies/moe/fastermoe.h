// FasterMoE's dynamic shadowing policy (He et al., PPoPP'22, §4.2; fastmoe
// fmoe/fastermoe/shadow_policy.py).
#ifndef STRATASIM_STRATEGIES_MOE_FASTERMOE_H_
#define STRATASIM_STRATEGIES_MOE_FASTERMOE_H_

#include <vector>

#include "strategies/moe/moe_cost.h"
#include "strategies/moe/placement.h"

namespace stratasim {

// From this iteration's counts (FasterMoE exchanges them before the all-to-all): walks the
// experts by descending load and shadows them (broadcasts each to every worker, whose tokens
// for it are then computed locally) as long as the modelled step cost
//   3 Lat_comp + 4 Lat_comm + 2 r size(params) / W_net   (r shadowed experts: broadcast and
//                                                          gradient reduce)
// keeps falling. Returns the shadowed experts as replicas held by all non-owner ranks.
std::vector<Replica> FasterMoeShadows(const TokenMatrix& t, int experts_per_rank,
                                      const MoeCostModel& m);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_FASTERMOE_H_
