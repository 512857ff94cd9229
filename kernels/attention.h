// Unfused scaled-dot-product attention (Vaswani et al. 2017): S = Q·K^T (batched GEMM),
// P = softmax(S / sqrt(d)) (row-wise kernel), O = P·V (batched GEMM), materialising S as
// Megatron-LM's unfused path does. The cuda backend times attention tasks as the batched GEMMs
// the TaskGraph gives (attn_scores, attn_values) and the softmax as its own elementwise task;
// this function chains the three for the calibration benchmarks and the end-to-end test.
#ifndef STRATASIM_KERNELS_ATTENTION_H_
#define STRATASIM_KERNELS_ATTENTION_H_

#include <cuda_runtime_api.h>

#include "core/dtype.h"
#include "kernels/gemm.h"

namespace stratasim::kernels {

struct AttentionShape {
  long long batch_heads = 1;  // micro-batch x heads
  long long seq = 0;
  long long head_dim = 0;
};

// q, k, v, out: [batch_heads][seq][head_dim]; scores: [batch_heads][seq][seq] scratch, all in
// `dtype` (FP32/TF32/FP16/BF16).
void AttentionForward(Blas& blas, DType dtype, const AttentionShape& s, const void* q,
                      const void* k, const void* v, void* scores, void* out, cudaStream_t stream);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_ATTENTION_H_
