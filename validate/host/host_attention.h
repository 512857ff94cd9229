// The host backend's fused attention (kFusedAttention tasks): FlashAttention's blocked
// algorithm on one CPU thread. The s_q x s_kv score matrix is never held: queries and keys are
// taken in tiles of `block_q` x `block_kv`, and the softmax is computed online (a running row
// maximum and sum rescale the partial output as each key tile arrives; Dao et al. 2022,
// Algorithm 1, in the loop order of FlashAttention-2, Dao 2023, Algorithm 1: query tiles
// outside, key tiles inside, so a query tile's output stays in cache). The backward (Dao 2023,
// Algorithm 2) recomputes each probability tile from the forward's row logsumexp instead of
// reading a stored P.
//
// Layout of one batch entry (one sequence and head), row-major, in the task's format (fp32 and
// tf32 as float, fp16, bf16): Q, O, dO, dQ [s_q][d]; K, V, dK, dV [s_kv][d]; the logsumexp
// [s_q] in FP32, as FlashAttention and cuDNN keep it. Entries are packed one after the other.
// Arithmetic is FP32 (tiles are widened to float, products accumulate in float), as the GPU
// kernels accumulate. Scores are scaled by 1 / sqrt(d).
//
// Memory: the inputs and outputs, O(s·d) per entry, plus FP32 scratch of O(s·d + tile²)
// (FusedAttentionScratchFloats), never O(s²).
#ifndef STRATASIM_VALIDATE_HOST_HOST_ATTENTION_H_
#define STRATASIM_VALIDATE_HOST_HOST_ATTENTION_H_

#include <cstddef>

#include "core/dtype.h"

namespace stratasim::validate::host {

struct FusedAttentionDims {
  long long batch = 1;  // sequences x heads
  long long s_q = 0;    // query rows
  long long s_kv = 0;   // key (and value) rows
  long long d = 0;      // head dimension
  // Query i attends to keys 0..i only; needs s_q == s_kv. Key tiles wholly above the diagonal
  // are skipped, so the masked half of the work is not done.
  bool causal = false;
  long long block_q = 64;   // query rows per tile
  long long block_kv = 64;  // key rows per tile
};

// Throws stratasim::Error unless every dimension and tile is >= 1, causal has s_q == s_kv and
// `dtype` is fp32, tf32, fp16 or bf16.
void CheckFusedAttention(DType dtype, const FusedAttentionDims& dims);

// FP32 scratch values the forward (backward: `backward`) needs, for one batch entry at a time;
// a double, so that no size computed from large dimensions wraps.
double FusedAttentionScratchFloats(const FusedAttentionDims& dims, bool backward);

// O = softmax(Q K^T / sqrt(d) [causal mask]) V, and lse[i] = log sum_j exp(S[i][j]) of the
// scaled, masked scores, for every batch entry. `scratch` holds
// FusedAttentionScratchFloats(dims, false) floats.
void FusedAttentionForward(DType dtype, const FusedAttentionDims& dims, const void* q,
                           const void* k, const void* v, void* o, float* lse, float* scratch);

// dQ, dK, dV of the forward above from Q, K, V, O, dO and the forward's lse. `scratch` holds
// FusedAttentionScratchFloats(dims, true) floats.
void FusedAttentionBackward(DType dtype, const FusedAttentionDims& dims, const void* q,
                            const void* k, const void* v, const void* o, const void* dout,
                            const float* lse, void* dq, void* dk, void* dv, float* scratch);

}  // namespace stratasim::validate::host

#endif  // STRATASIM_VALIDATE_HOST_HOST_ATTENTION_H_
