// DPC's per-layer quantize/dequantize on the GPU (Decreasing Precision with layer Capacity,
// Frontiers of Computer Science 2025): a layer's tensor rounded to the layer's bit width, as
// kernels/bit_quantize_ref.h defines it (and kernels/bit_quantize_test.cpp checks it against).
#ifndef STRATASIM_KERNELS_BIT_QUANTIZE_H_
#define STRATASIM_KERNELS_BIT_QUANTIZE_H_

#include <cuda_runtime_api.h>

#include "kernels/bit_quantize_ref.h"

namespace stratasim::kernels {

// y[i] = the quantize/dequantize of x[i] (n FP32 device values) in precision p, and *scale (one
// device float) its scale. Integer formats: an absmax reduction (per block, then atomicMax on
// the float's bits, which order like the values for non-negative floats), the scale absmax /
// (2^(b-1) - 1), then rintf(x / scale) clamped, times the scale: bit for bit the reference.
// Float formats: cuda_fp8.h / cuda_fp16.h / cuda_bf16.h round-to-nearest-even conversions (FP8
// saturating), scale 1. Throws Error for an invalid p.
void BitQuantize(const float* x, long long n, const reference::BitPrecision& p, float* y,
                 float* scale, cudaStream_t stream);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_BIT_QUANTIZE_H_
