// Row-wise kernels: softmax (the attention probabilities of an unfused attention) and LayerNorm.
// One thread block per row; inputs and outputs in `dtype` (FP32/TF32/FP16/BF16), math in FP32.
#ifndef STRATASIM_KERNELS_ROWWISE_H_
#define STRATASIM_KERNELS_ROWWISE_H_

#include <cuda_runtime_api.h>

#include "core/dtype.h"

namespace stratasim::kernels {

// y[r][:] = softmax(scale * x[r][:]) for r < rows, subtracting the row maximum first so that
// large logits do not overflow. x and y may alias.
void Softmax(DType dtype, const void* x, void* y, long long rows, int cols, float scale,
             cudaStream_t stream);

// y[r][:] = (x[r][:] - mean) / sqrt(var + eps) * gamma + beta, biased variance; gamma and beta
// are FP32 vectors of `cols` (mixed precision keeps norm weights in FP32).
void LayerNorm(DType dtype, const void* x, const float* gamma, const float* beta, void* y,
               long long rows, int cols, float eps, cudaStream_t stream);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_ROWWISE_H_
