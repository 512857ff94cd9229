// Persistent placements for Prophet and Pro-Prophet (issue #27, docs/moe.md "Persistent
// placements"): both planners rely on the temporal locality of the routing (Pro-Prophet plans
// iteration t from iteration t - 1's counts, arXiv 2411.10003 §4.3; Prophet from a moving
// average of them), so a replicated expert's copy may stay on its holders across iterations
// instead of being broadcast again before every forward.
//
// The physical model (strategies/moe/moe_graph.h, MoeSchedule::persistent): a copy's holder
// keeps the copy's weights, gradients and Adam state; the copy's gradient aggregation is an
// all-reduce among the owner and the holders, after which every copy applies the same Adam
// step, so a copy kept from the previous iteration needs no parameter broadcast. A copy new in
// this iteration receives its parameters before the forward and its optimizer state before
// the step; a dropped copy sends nothing and frees its memory.
//
// The decision per (iteration, layer), with no tuned constant: keep the previous iteration's
// placement while what keeping it has cost, its modelled time on the predicted counts above the
// fresh plan's summed over the iterations since the layer's placement last changed, is at most
// the modelled time to move the state (parameters and optimizer state) of the copies the fresh
// plan adds; otherwise switch to the fresh plan. Over one iteration that is
// T'(kept) <= T'(fresh) + that cost; summed, it is the break-even rule of the ski-rental
// problem (pay the rent, here the slower placement, until it has cost as much as buying, here
// the move: deterministic and within twice the cost of the best choice made knowing the
// future; Karlin, Manasse, Rudolph and Sleator, "Competitive snoopy caching", Algorithmica
// 1988), which does not stay forever on a placement that is a little worse every iteration
// when moving costs more than one iteration's difference.
#ifndef STRATASIM_STRATEGIES_MOE_PERSISTENT_PLACEMENT_H_
#define STRATASIM_STRATEGIES_MOE_PERSISTENT_PLACEMENT_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/moe_figures.h"
#include "strategies/moe/moe_cost.h"
#include "strategies/moe/placement.h"

namespace stratasim {

// One copy: (expert, holder), the owner excluded.
using ExpertCopy = std::pair<int, int>;

// The copies of `replicas`, sorted.
std::vector<ExpertCopy> CopiesOf(const std::vector<Replica>& replicas);

// The copies of `now` that `before` does not have, as replicas listing only the added
// holders (an expert with none added is left out), in `now`'s order.
std::vector<Replica> AddedCopies(const std::vector<Replica>& before,
                                 const std::vector<Replica>& now);

// Copies created plus copies dropped from `before` to `now`.
int PlacementChanges(const std::vector<Replica>& before, const std::vector<Replica>& now);

// Bytes of one expert's state a new holder receives: the training copy of its parameters
// (before the forward) and its optimizer state (before the step).
struct CopyStateBytes {
  double params = 0;
  double optimizer = 0;
  double Total() const { return params + optimizer; }
};
// For `expert_params` parameters trained in `dtype` with mixed-precision Adam
// (models/memory.h, AdamStateBytes: 2 bytes of FP16/BF16 weights and 12 of FP32 master
// weights and moments per parameter).
CopyStateBytes ExpertCopyStateBytes(double expert_params, DType dtype);

// The transfers a placement makes under persistence, in Pro-Prophet's T_Trans form
// (moe_cost.h, ReplicaTransferSeconds: (holders + 1) / D x bytes / B per expert): the new
// copies' parameters (before the forward) in `trans_s`; in `agg_s` the gradients' all-reduce
// among the owner and every holder (a reduce-scatter and an all-gather: twice the reduce's
// T_Agg) and the new copies' optimizer state (sent with the aggregation). New copies: those of
// `placement` not in `held`.
struct PersistentTransfers {
  double trans_s = 0;
  double agg_s = 0;
};
PersistentTransfers PersistentTransferSeconds(const std::vector<Replica>& placement,
                                              const std::vector<Replica>& held, int ranks,
                                              const MoeCostModel& m, const CopyStateBytes& state);

// A planner's modelled time of one layer under a placement whose parameter transfers take
// `trans_s` and gradient aggregation `agg_s` (its own cost model: Prophet's, Pro-Prophet's T').
using LayerSecondsFn = std::function<double(const LayerDecision& d, double trans_s, double agg_s)>;

struct KeepOrReplanChoice {
  std::vector<Replica> replicas;  // what the layer uses this iteration
  bool kept = false;              // stayed on the previous placement, unchanged
  bool partial = false;           // stayed on the previous copies the fresh plan also has
  // T'(kept): the previous placement, nothing to send. T'(fresh): the fresh plan as if its
  // copies were held. replan_s: the modelled time to send the fresh plan's new copies their
  // parameters and optimizer state (T_Trans form, none of it hidden). partial_s: T' of the
  // common copies.
  double kept_s = 0, fresh_s = 0, replan_s = 0, partial_s = 0;
};

// The decision rule: every placement evaluated on `predicted` (ReplicatedPlacement with
// `spread`, as the planner places tokens) by the planner's `seconds` with the transfers
// persistence makes (PersistentTransferSeconds). `regret_s`: what staying has cost since the
// layer last switched (0 at the start). Staying is keeping `previous`, or only its copies that
// `fresh` also has when dropping the others makes the layer faster (dropping sends nothing).
// Stays when *regret_s + max(0, T'(stay) - T'(fresh)) <= replan_s, adding that to *regret_s;
// else switches to `fresh` and resets *regret_s.
KeepOrReplanChoice KeepOrReplan(const TokenMatrix& predicted, int experts_per_rank, bool spread,
                                const std::vector<Replica>& previous, std::vector<Replica> fresh,
                                const LayerSecondsFn& seconds, const MoeCostModel& m,
                                const CopyStateBytes& state, double* regret_s);

// MoeFigures::placement_changes and placement_kept_fraction over the measured iterations
// (t >= warmup) of decisions[t][l]. Changes count copies created plus dropped against the
// previous iteration's placement, whether or not the copies persist; the kept fraction counts,
// among (iteration, layer) pairs whose previous iteration had copies, those whose placement
// stayed in GPU memory unchanged: 0 when `persistent` is false (every copy is sent again).
void FillPlacementFigures(const std::vector<std::vector<LayerDecision>>& decisions, int warmup,
                          bool persistent, MoeFigures* f);

// The plan note of the figures above and MoeFigures::transfer_bytes_saved.
std::string PersistentPlacementNote(const MoeFigures& f);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_PERSISTENT_PLACEMENT_H_
