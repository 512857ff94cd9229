// Pro-Prophet's planner (Wang et al., arXiv 2411.10003, §4; the repository's
// load-balancing/search_algorithm.py): a greedy search over lightweight placements.
#ifndef STRATASIM_STRATEGIES_MOE_PRO_PROPHET_H_
#define STRATASIM_STRATEGIES_MOE_PRO_PROPHET_H_

#include <vector>

#include "strategies/moe/moe_cost.h"
#include "strategies/moe/placement.h"

namespace stratasim {

// Pro-Prophet's modelled time of one layer under decision `d` with `replicas` (moe_cost.h):
// with the scheduler, T' = 4 T_A2A + 3 T_FEC + max(0, T_Trans - T_FEC - T_FNEC)
// + max(0, T_Agg - T_BEC - T_BNEC); without, the transfers add in full.
double ProProphetLayerSeconds(const LayerDecision& d, int ranks, const MoeCostModel& m,
                              bool scheduled);
// The same with the parameter transfers' and the gradient aggregation's seconds given
// (persistent placements move other bytes: strategies/moe/persistent_placement.h).
double ProProphetLayerSeconds(const LayerDecision& d, const MoeCostModel& m, bool scheduled,
                              double trans_s, double agg_s);

// From the predicted counts (the previous iteration's), following the public code
// (king0722/Pro-Prophet, load-balancing/search_algorithm.py): repeatedly takes the most loaded
// device's heaviest unreplicated expert and replicates it on every other device except the C
// with the fewest tokens for it (which keep sending them to the owner), C = min(1, the fewest
// zero counts any device receives for its experts); returns the first k copies, k the number
// of rounds that lowered the modelled time. Stops when max(H) - min(H) < alpha * I / D (I
// tokens, D devices: alpha times the mean device load), when the device has no expert left to
// replicate, or after E rounds.
std::vector<Replica> ProProphetSearch(const TokenMatrix& predicted, int experts_per_rank,
                                      const MoeCostModel& m, double alpha, bool scheduled);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_PRO_PROPHET_H_
