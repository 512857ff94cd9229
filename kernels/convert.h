// Filling device tensors with reproducible values and converting them to and from FP32.
// The cuda backend fills every buffer before timing (GEMMs on zeros draw less power and can
// run faster than on real data); the tests use the conversions to feed the CPU references
// exactly the rounded values the GPU kernels saw.
#ifndef STRATASIM_KERNELS_CONVERT_H_
#define STRATASIM_KERNELS_CONVERT_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/dtype.h"

namespace stratasim::kernels {

// Fills n elements of `dtype` at `dst` with values uniform in [lo, hi), rounded to the format,
// from a counter-based hash of (seed, index): the same seed gives the same tensor on any GPU.
// FP8 is E4M3 (the forward-pass format of Micikevicius et al. 2022); INT8 rounds to the nearest
// integer and saturates; INT4 fills n/2 bytes of packed nibbles.
void FillUniform(DType dtype, void* dst, long long n, std::uint64_t seed, float lo, float hi,
                 cudaStream_t stream);

// dst[i] = float(src[i]) for FP32/TF32/FP16/BF16/FP8/INT8 sources.
void ToFloat(DType dtype, const void* src, float* dst, long long n, cudaStream_t stream);
// dst[i] = round-to-nearest-even of src[i] in `dtype` (INT8: nearest integer, saturated).
void FromFloat(DType dtype, const float* src, void* dst, long long n, cudaStream_t stream);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_CONVERT_H_
