// Data parallelism as PyTorch DistributedDataParallel does it (Li et al. 2020, "PyTorch
// Distributed: Experiences on Accelerating Data Parallel Training", VLDB).
//
// Every GPU holds the whole model and runs global_batch / GPUs samples as micro-batches with
// gradient accumulation (no communication until the last micro-batch). During the last
// backward pass, gradients are packed into buckets in reverse layer order; a bucket is
// all-reduced over all GPUs on a communication stream as soon as the backward pass has
// produced all its gradients, overlapping with the rest of the backward pass. The optimizer
// step (Adam) runs after the last bucket.
//
// Options: DdpOptions() (ddp.cpp) declares them; `stratasim strategies ddp` lists them. The
// lowering is strategies/data/data_parallel.h, shared with the layer-wise precision kinds.
//
// Memory: weights, gradients and Adam states (models/memory.h) and the bucket buffers from the
// start; each micro-batch's activations from its layer's forward to its backward, with the
// model's recomputation choice.
#ifndef STRATASIM_STRATEGIES_DATA_DDP_H_
#define STRATASIM_STRATEGIES_DATA_DDP_H_

#include "strategies/plan.h"

namespace stratasim {

Plan PlanDdp(const Scenario& s, const StrategySpec& spec);
const OptionSpecs& DdpOptions();

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_DATA_DDP_H_
