// The attention core of a transformer layer (softmax(Q K^T / sqrt(d)) V per sequence and head),
// run either as separate kernels or as one fused kernel (docs/models.md, "Attention: flash or
// unfused").
//
// Unfused: attn_scores (Q K^T), softmax (scale, mask and softmax fused), attn_dropout and
// attn_values (P V), each writing its s x s output to device memory; the softmax output, the
// dropout mask and the dropout output are kept for the backward: 5 a s^2 b bytes with 16-bit
// values and dropout (Korthikanti et al. 2022, §4.1).
//
// Flash (FlashAttention; Dao et al. 2022, "FlashAttention: Fast and Memory-Efficient Exact
// Attention with IO-Awareness"; Dao 2023, "FlashAttention-2"): one kernel per pass that keeps
// the score tiles on chip.
//   FLOPs     forward 4 b s^2 h (Q K^T and P V); backward 2.5x that, 10 b s^2 h: five products,
//             the recomputed scores Q K^T, dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q
//             (Dao 2023, §3.1). A causal kernel skips the masked tiles: half of both (the
//             diagonal's s/2 extra entries are left out).
//   traffic   forward reads Q, K, V and writes O and the FP32 logsumexp (b a s x 4 bytes);
//             backward reads Q, K, V, O, dO and the logsumexp and writes dQ, dK, dV. This is
//             the compulsory traffic: Dao et al. 2022 (§3.2, Theorem 2) count Theta(s^2 d^2 / M)
//             HBM accesses for SRAM of M bytes, as K and V are streamed once per query block;
//             those re-reads hit L2 for the head sizes used (d <= 256) and are left out, as are
//             FlashAttention-2's small preprocessing kernel (rowsum(dO * O)) and its FP32 dQ
//             accumulator.
//   saved     only the logsumexp: Q, K and V are kept by qkv and O by proj (its input), and no
//             s^2 tensor exists; dropout is fused (the mask is regenerated from a Philox seed in
//             the backward), so nothing else is kept.
// Grouped-query attention: K and V have kv_heads heads; the FLOPs are those of multi-head
// attention (each K and V serves heads / kv_heads query heads).
#ifndef STRATASIM_MODELS_ATTENTION_H_
#define STRATASIM_MODELS_ATTENTION_H_

#include <vector>

#include "models/workload.h"

namespace stratasim {

struct AttentionShape {
  double micro_batch = 1;  // b
  double sequence = 0;     // s
  double heads = 0;        // a
  double kv_heads = 0;
  double head_dim = 0;  // d = h / a
  double bytes_per_element = 2;
  bool dropout = true;
  bool causal = true;
};

// The unfused core's ops, in forward order (attention_core set on each).
std::vector<OpCost> UnfusedAttention(const AttentionShape& x);

// The fused core: one op "attention" of kind kFusedAttention (attention_core set), with gemm
// {batch b a, m s, n s, k d} and the causal flag on each pass's KernelCost.
OpCost FlashAttention(const AttentionShape& x);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_ATTENTION_H_
