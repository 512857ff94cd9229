// Builders of the op kinds every model is made of: matrix products, elementwise kernels,
// convolutions, and the quantise/dequantise kernels of low-precision schemes.
#ifndef STRATASIM_MODELS_OPS_H_
#define STRATASIM_MODELS_OPS_H_

#include <string>

#include "core/dtype.h"
#include "models/workload.h"

namespace stratasim {

// Y[m, n] = X[m, k] W[k, n] with a weight W: forward 2mkn FLOPs; the input gradient
// dX = dY W^T and the weight gradient dW = X^T dY are one GEMM of 2mkn each. Each of the three
// reads its two operands and writes its result once. Saves its input X (m k elements).
OpCost Linear(const std::string& name, double m, double k, double n, double e);

// `batch` products C[m, n] = A[m, k] B[k, n] of two activations (attention's Q K^T and P V):
// the backward computes both operands' gradients, two products of 2mkn each, costed with the
// shape of dA = dC B^T. Saves nothing (the operands are saved by the ops that made them).
OpCost BatchedMatmul(const std::string& name, double batch, double m, double k, double n, double e);

// A memory-bound kernel over `elements` values of `e` bytes that reads `reads` and writes
// `writes` tensors of that size; its backward moves twice the bytes (the output gradient and
// what it saved in, the input gradient out). Saves nothing unless the caller says so.
OpCost Elementwise(const std::string& name, double elements, double e, double reads, double writes);

// Dropout over `elements` values: reads the input, writes the output and a 1-byte mask, which
// it saves (Korthikanti et al. 2022 count the mask as one byte per element).
OpCost Dropout(const std::string& name, double elements, double e);

// A 2-D convolution as the implicit GEMM cuDNN runs: m = batch * out_h * out_w output pixels,
// n = out_channels, k = in_channels * kernel^2. Saves its input unless `save_input` is false
// (the input is already saved by another op, e.g. a residual block's shortcut).
OpCost Conv2d(const std::string& name, double batch, double in_channels, double in_size,
              double out_channels, double kernel, double stride, double e, bool save_input = true);

// Converting `elements` values between formats (e.g. BF16 -> FP8 with a per-tensor scale, or
// back): a memory-bound elementwise kernel reading `from` and writing `to`; no backward.
OpCost QuantizeOp(const std::string& name, double elements, DType from, DType to);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_OPS_H_
