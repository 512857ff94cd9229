// The plan shared by the layer-wise precision kinds (dpc, uniform-precision): DDP's schedule
// (strategies/data/ddp_step.h) over a workload whose weight layers compute in formats a
// policy chooses (strategies/precision/layer_precision.h), with each bucket's gradients at
// their layers' bit widths and a dequantize kernel after each all-reduce.
#ifndef STRATASIM_STRATEGIES_PRECISION_PRECISION_LOWERING_H_
#define STRATASIM_STRATEGIES_PRECISION_PRECISION_LOWERING_H_

#include <functional>
#include <vector>

#include "strategies/data/ddp_step.h"
#include "strategies/plan.h"
#include "strategies/precision/layer_precision.h"

namespace stratasim {

// Formats for the weight layers (one per entry of `weights`, in that order).
using FormatPolicy = std::function<std::vector<DType>(const std::vector<WeightLayer>& weights)>;

// Plans DDP with settings `o` (read by `opt`, the kind's finished reader, which locates the
// batch-split error) and each weight layer in the format `policy` gives it. Notes say how many
// weight layers and parameters run in each format, each format's share of the GEMM FLOPs, and the
// gradient bytes against those of the storage format.
Plan PlanLayerPrecision(const Scenario& s, const DdpSettings& o, const OptionReader& opt,
                        const FormatPolicy& policy);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PRECISION_PRECISION_LOWERING_H_
