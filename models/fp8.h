// FP8 training as NVIDIA Transformer Engine runs it (Micikevicius et al. 2022, "FP8 Formats for
// Deep Learning"; Transformer Engine's user guide, "Using FP8 with Transformer Engine"): the
// GEMMs of the transformer layers' linear layers (QKV, attention output, MLP or expert
// projections) take FP8 inputs, E4M3 in the forward pass and E5M2 for gradients, with one scale
// per tensor from a history of absolute maxima ("delayed scaling"), and write BF16. Everything
// else stays BF16: elementwise kernels, the attention core (TE keeps dot-product attention in
// BF16 unless NVTE_FP8_DPA is set), the embedding, the output layer and the MoE router
// (Megatron-LM does not run those through TE's FP8 layers), communication and gradients.
//
// What it costs:
//   - each FP8 GEMM runs at the GPU's FP8 peak (its KernelCost::dtype is kFP8) and moves its
//     inputs at 1 byte per element and its BF16 output at 2;
//   - before it, a cast-transpose kernel (TE's cast_transpose) reads each BF16 input once and
//     writes its FP8 copy and its transposed FP8 copy, the layout the backward GEMMs take: the
//     activation X and the weight W in the forward pass, the output gradient dY in the backward.
//     The weight cast is counted for every micro-batch: an upper bound, as TE caches the FP8
//     weights across the micro-batches of one iteration (is_first_microbatch);
//   - one amax-and-scale update per layer and pass (TE's fused amax_and_scale_update) reads and
//     writes each FP8 tensor's amax history (kAmaxHistory FP32 values);
//   - each GEMM keeps its FP8 input for the weight gradient (1 byte per element) instead of the
//     BF16 one, as TE's Linear saves its FP8 input.
// Model states add the FP8 copy of the weights (models/memory.h).
#ifndef STRATASIM_MODELS_FP8_H_
#define STRATASIM_MODELS_FP8_H_

#include "models/workload.h"

namespace stratasim {

// Transformer Engine's default DelayedScaling amax_history_len.
inline constexpr double kAmaxHistory = 1024;

// Turns a BF16 workload (built with 2-byte elements) into its FP8-training form: the linear
// GEMMs of transformer layers (recomputable layers' kGemm ops except the MoE router) become FP8
// with their cast kernels before them ("<op>_fp8_cast") and an "fp8_amax" op ends each such
// layer. Sets w.precision to kFP8. Call before ApplyRecompute.
void ApplyFp8Training(Workload& w);

// Whether `op` is an FP8 GEMM (its forward runs in FP8).
bool IsFp8Gemm(const OpCost& op);

// Makes a Linear-built BF16 op (models/ops.h) an FP8 GEMM: each pass reads its inputs at 1 byte
// and writes BF16, runs at the FP8 peak, and saves its input at 1 byte per element.
void MakeFp8Gemm(OpCost& op);

// Re-derives a layer's cast and amax ops from its FP8 GEMMs (after a tensor-parallel split has
// changed their shapes).
void RefreshFp8Bookkeeping(LayerCost& layer);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_FP8_H_
