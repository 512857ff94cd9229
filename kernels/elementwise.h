// Memory-bound elementwise kernels: what the cuda backend runs for a task of OpKind
// kElementwise (norms, activations, residual adds, dropout are costed by bytes alone; see
// docs/models.md). Inputs and outputs are in `dtype` (FP32/TF32/FP16/BF16); math is FP32.
#ifndef STRATASIM_KERNELS_ELEMENTWISE_H_
#define STRATASIM_KERNELS_ELEMENTWISE_H_

#include <cuda_runtime_api.h>

#include "core/dtype.h"

namespace stratasim::kernels {

// y[i] = alpha * x[i] + y[i] (a residual add / SAXPY): reads 2 and writes 1 element per i.
void ScaleAdd(DType dtype, float alpha, const void* x, void* y, long long n, cudaStream_t stream);

// y[i] = GELU(x[i]) with the tanh approximation used by GPT-2 and Megatron-LM
// (Hendrycks & Gimpel 2016): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// Reads 1 and writes 1 element per i; x and y may alias.
void Gelu(DType dtype, const void* x, void* y, long long n, cudaStream_t stream);

// An empty kernel (one block of one thread): the fixed cost of a launch, for calibration.
void EmptyKernel(cudaStream_t stream);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_ELEMENTWISE_H_
