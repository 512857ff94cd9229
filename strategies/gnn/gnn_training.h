// Data-parallel GraphSAGE training with sampled mini-batches, whose cost is moving the input
// features host-to-device (docs/gnn.md). Three kinds differ only in where features come from
// (strategies/gnn/feature_source.h):
//  - gnn-no-cache: every input vertex's row is copied host-to-device;
//  - gnn-static-cache: PaGraph (Lin et al., SoCC 2020) keeps the rows of the highest-degree
//    vertices on every GPU; the host knows the cache, so it sends the hits' slots and copies
//    only the misses' rows;
//  - brgraph: BRGraph (CCPE 2022) keeps the last batch (levels: 2, the last two) on the GPU;
//    the batch's ids go to the GPU, the duplicate-detection kernel (kernels/batch_reuse.h)
//    finds the hits and compacts the misses, whose positions come back to the host, which then
//    copies only the misses' rows.
// Per GPU and micro-batch: its own sampled mini-batch (models/graphsage.h), the lookups and
// copies above (kCopy tasks from the GPU's CPU socket over the server's PCIe tree, so GPUs under
// one switch contend), the hits gathered device-to-device, then GraphSAGE's forward and
// backward for that batch; per iteration one all-reduce of the gradients and Adam. Time is
// saved only by the bytes not copied: no factor. Feature rows are FP32 (feature_dim x 4 bytes).
#ifndef STRATASIM_STRATEGIES_GNN_GNN_TRAINING_H_
#define STRATASIM_STRATEGIES_GNN_GNN_TRAINING_H_

#include "strategies/plan.h"

namespace stratasim {

Plan PlanGnnNoCache(const Scenario& s, const StrategySpec& spec);
Plan PlanGnnStaticCache(const Scenario& s, const StrategySpec& spec);
Plan PlanBrGraph(const Scenario& s, const StrategySpec& spec);
const OptionSpecs& GnnNoCacheOptions();
const OptionSpecs& GnnStaticCacheOptions();
const OptionSpecs& BrGraphOptions();

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_GNN_GNN_TRAINING_H_
