// Prophet's planner (Wang et al., "Prophet: Fine-grained Load Balancing for Parallel Training
// of Large-scale MoE Models", CLUSTER'23).
//
// The paper's full text is not in our corpora (shared notes); what is modelled follows what
// its successor Pro-Prophet and citing work say of it, and is an assumption:
//   - the predicted load is a moving average of the previous iterations' counts
//     (pred_t = h * counts_{t-1} + (1 - h) * pred_{t-1}), exploiting the temporal locality of
//     expert loads;
//   - the fine-grained placement replicates the most loaded device's heaviest expert onto the
//     least loaded device, one copy at a time, and splits the tokens of that expert that
//     must travel evenly over all its copies (holders compute their own tokens locally),
//     accepting a copy while the modelled layer time (Pro-Prophet's model, with the transfers
//     hidden behind the previous layer's compute) falls;
//   - the layer-wise scheduler issues layer l + 1's parameter transfers when layer l's forward
//     starts (moe_graph.h, TransferSchedule::kPreviousLayer).
#ifndef STRATASIM_STRATEGIES_MOE_PROPHET_H_
#define STRATASIM_STRATEGIES_MOE_PROPHET_H_

#include <vector>

#include "strategies/moe/moe_cost.h"
#include "strategies/moe/placement.h"

namespace stratasim {

// Stops when max - min predicted device load < alpha * mean device load (I / D, Pro-Prophet's
// rule: load-balancing/search_algorithm.py's balanced_condition), when the next copy
// does not lower the modelled time, or after D * E / 2 copies.
std::vector<Replica> ProphetPlan(const TokenMatrix& predicted, int experts_per_rank,
                                 const MoeCostModel& m, double alpha, bool scheduled);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_PROPHET_H_
