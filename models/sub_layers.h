// Sub-layer blocks: a transformer layer split into its attention half and its MLP half, the
// units AutoPipe (CLUSTER'22) partitions a model by (planners, strategies/planners/planner.h).
// The attention half runs up to its residual add ("residual1", and BERT's post-norm "norm1"
// after it); the MLP half (MoE's router and experts included) is the rest. Both keep the
// layer's input size as their input (the residual stream, b s h elements) and are recomputable.
#ifndef STRATASIM_MODELS_SUB_LAYERS_H_
#define STRATASIM_MODELS_SUB_LAYERS_H_

#include "models/workload.h"

namespace stratasim {

// `w` with each transformer layer "<name>" split into "<name>.attn" and "<name>.mlp"; other
// layers (embedding, head, CNN blocks) as they are. Activations are those of no
// recomputation; FLOPs, bytes, parameters and activations sum to w's.
Workload SplitSubLayers(const Workload& w);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_SUB_LAYERS_H_
