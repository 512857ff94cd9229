// Activation recomputation (Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost";
// Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models").
//
//   none       every op keeps what its backward needs
//   full       a recomputable layer keeps only its input; just before its backward the whole
//              forward runs again (Phase::kRecompute tasks), re-creating its activations
//   selective  a layer drops the attention core's activations (the 5 a s^2 b terms) and re-runs
//              only the attention-core ops; for a GPT layer it keeps 34 s b h bytes.
//              With flash attention (models/attention.h) it is moot: the fused kernel keeps no
//              s^2 tensor, only its FP32 logsumexp (4 a s b bytes), which selective drops while
//              still re-running the kernel's forward (as Megatron's checkpoint_core_attention
//              does), so it costs 4 b s^2 h FLOPs per layer (half when causal) for 4 a s b bytes
//
// Embeddings and heads are never recomputed (Megatron-LM recomputes transformer layers only).
#ifndef STRATASIM_MODELS_RECOMPUTE_H_
#define STRATASIM_MODELS_RECOMPUTE_H_

#include <vector>

#include "core/scenario.h"
#include "models/workload.h"

namespace stratasim {

// Sets each layer's activation_bytes, recomputed_bytes and its ops' `recomputed` flags for
// `mode`, applied to the first `max_layers` recomputable layers (0: all of them).
void ApplyRecompute(Workload& w, Recompute mode, int max_layers = 0);
// The same for the layers `layers` flags (by index in w.layers; the recomputable ones only): a
// planner's per-block choice. The others keep all their activations.
void ApplyRecompute(Workload& w, Recompute mode, const std::vector<bool>& layers);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_RECOMPUTE_H_
