// The optimizer step the cuda backend runs for an OpKind::kOptimizer task: AdamW over FP32
// master weights and FP32 moments, reading gradients in the training format (mixed precision,
// Micikevicius et al. 2018), as ZeRO and Megatron-LM keep them.
#ifndef STRATASIM_KERNELS_ADAM_H_
#define STRATASIM_KERNELS_ADAM_H_

#include <cuda_runtime_api.h>

#include "core/dtype.h"
#include "kernels/reference.h"

namespace stratasim::kernels {

// One AdamW step over n parameters in place (same rule as reference::AdamStep): grads are in
// `grad_dtype` (FP32/TF32/FP16/BF16); params, m and v are FP32.
void AdamStep(const reference::AdamConfig& config, DType grad_dtype, float* params,
              const void* grads, float* m, float* v, long long n, cudaStream_t stream);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_ADAM_H_
