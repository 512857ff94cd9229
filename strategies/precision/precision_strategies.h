// Layer-wise low precision in data-parallel training (strategies/precision/layer_precision.h
// for what a layer's format changes, precision_lowering.h for the plan):
//
// dpc: DPC, "Decreasing Precision with layer Capacity" (Frontiers of Computer Science, 2025):
//   each weight layer (a linear or convolution layer) gets a bit width that decreases with its
//   capacity, its parameter count, with no analysis of the training process. Here the weight
//   layers are ranked by capacity, ascending, and split into len(formats) groups of equal
//   count: the layer at rank r (0-based, of n) falls in group floor(r x len(formats) / n); layers
//   of equal capacity take the mean of the ranks they span (the usual rule for ties), so they
//   share a group; group i computes in formats[i], the first (highest precision) for the
//   smallest layers. The paper costs precision in BitOPs (b_w x b_a x MACs); the simulator runs
//   each format at the GPU's tensor-core peak for it, which is what a GPU's time follows.
// uniform-precision: the baseline the paper compares with: every weight layer in one format.
//
// Both: DDP's options (strategies/data/ddp.h) and schedule; the checks of formats.h.
#ifndef STRATASIM_STRATEGIES_PRECISION_PRECISION_STRATEGIES_H_
#define STRATASIM_STRATEGIES_PRECISION_PRECISION_STRATEGIES_H_

#include <vector>

#include "strategies/plan.h"

namespace stratasim {

Plan PlanDpc(const Scenario& s, const StrategySpec& spec);
const OptionSpecs& DpcOptions();

Plan PlanUniformPrecision(const Scenario& s, const StrategySpec& spec);
const OptionSpecs& UniformPrecisionOptions();

// DPC's grouping: the group (0 to groups - 1) of each of the layers of `capacity` (parameter
// counts), as the header describes. groups >= 1.
std::vector<int> CapacityGroups(const std::vector<double>& capacity, int groups);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PRECISION_PRECISION_STRATEGIES_H_
