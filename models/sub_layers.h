// Sub-layer blocks: each transformer layer split into its attention half and its MLP half, the
// finer units AutoPipe partitions pipelines over (Liu et al. 2022, "AutoPipe: A Fast Pipeline
// Parallelism Approach with Balanced Partitioning and Micro-batch Slicing", CLUSTER, §3.2):
// a stage boundary may then fall in the middle of a layer.
//
// The attention half is the layer's ops up to and including "residual1", with the post-norm
// "norm1" that follows it in BERT-style layers; the MLP half is the rest (MoE's router, dispatch,
// experts and combine included). Both are recomputable and both take the hidden activation
// (b x s x h) as input, so either can start a stage.
#ifndef STRATASIM_MODELS_SUB_LAYERS_H_
#define STRATASIM_MODELS_SUB_LAYERS_H_

#include "models/workload.h"

namespace stratasim {

// `w` with each transformer layer "<name>" (models/transformer.cpp: a layer with the ops "qkv",
// "residual1" and "residual2") replaced by "<name>.attn" and "<name>.mlp"; other layers
// (embedding, head, CNN blocks, GraphSAGE layers, and halves already split) are kept as they
// are. FLOPs, bytes, parameters and activation bytes add up to w's. The result carries no
// recomputation (its activations are re-finalised, FinalizeWorkload): apply it afterwards with
// ApplyRecompute (models/recompute.h). Throws Error when a layer has "qkv" and "residual2" but no
// "residual1" before them (not a layer the builders make).
Workload SplitSubLayers(const Workload& w);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_SUB_LAYERS_H_
