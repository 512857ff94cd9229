// Blockwise INT8 quantization, the compression step of gradient-compression strategies
// (e.g. CASQ, S2Reducer's quantized payloads): an absmax reduction per block, then a scaled
// rounding. Matches reference::QuantizeInt8 bit for bit.
#ifndef STRATASIM_KERNELS_QUANTIZE_H_
#define STRATASIM_KERNELS_QUANTIZE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/dtype.h"

namespace stratasim::kernels {

// q[i] = round(x[i] / scale[b]), scale[b] = absmax(block b) / 127 (1 for an all-zero block);
// x in `dtype` (FP32/TF32/FP16/BF16), ceil(n / block) scales. block <= 1 << 20.
void QuantizeInt8(DType dtype, const void* x, long long n, int block, std::int8_t* q, float* scales,
                  cudaStream_t stream);
// y[i] = q[i] * scale[i / block], y in `dtype`.
void DequantizeInt8(DType dtype, const std::int8_t* q, const float* scales, long long n, int block,
                    void* y, cudaStream_t stream);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_QUANTIZE_H_
