// CPU reference implementations of the CUDA kernels in kernels/: plain loops in double
// precision over FP32 values, written for clarity, not speed. Each GPU test feeds a kernel and
// its reference the same (format-rounded) inputs and compares the outputs within a tolerance
// set by the format. These build and are tested on every machine, GPU or not.
#ifndef STRATASIM_KERNELS_REFERENCE_H_
#define STRATASIM_KERNELS_REFERENCE_H_

#include <cstdint>
#include <vector>

namespace stratasim::kernels::reference {

// Row-major C[p][m][n] = sum_k A[p][m][k] * B'[p][k][n] for p < batch (packed batches), where
// B' is B stored [k][n], or with `b_transposed` B stored [n][k] (nn.Linear's weight layout).
std::vector<float> Gemm(const std::vector<float>& a, const std::vector<float>& b, int m, int n,
                        int k, int batch, bool b_transposed);

// y = alpha * x + y.
void ScaleAdd(float alpha, const std::vector<float>& x, std::vector<float>& y);
// GELU, tanh approximation (see kernels/elementwise.h).
std::vector<float> Gelu(const std::vector<float>& x);

// Row-wise softmax of scale * x over `cols` columns (rows = x.size() / cols), max-subtracted.
std::vector<float> Softmax(const std::vector<float>& x, int cols, float scale);
// Row-wise LayerNorm (Ba et al. 2016): (x - mean) / sqrt(var + eps) * gamma + beta, biased
// variance as PyTorch's nn.LayerNorm uses.
std::vector<float> LayerNorm(const std::vector<float>& x, const std::vector<float>& gamma,
                             const std::vector<float>& beta, float eps);

struct AdamConfig {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // decoupled, as AdamW (Loshchilov & Hutter 2019)
  int step = 1;               // 1-based, for the bias corrections
};
// One AdamW step (Kingma & Ba 2015, Algorithm 1, with decoupled weight decay), in place.
void AdamStep(const AdamConfig& c, std::vector<float>& params, const std::vector<float>& grads,
              std::vector<float>& m, std::vector<float>& v);

// Blockwise symmetric INT8 quantization: per block of `block` values, scale = absmax / 127
// (1 when the block is all zeros), q = round-to-nearest-even(x / scale) clamped to [-127, 127].
void QuantizeInt8(const std::vector<float>& x, int block, std::vector<std::int8_t>& q,
                  std::vector<float>& scales);
std::vector<float> DequantizeInt8(const std::vector<std::int8_t>& q,
                                  const std::vector<float>& scales, int block);

}  // namespace stratasim::kernels::reference

#endif  // STRATASIM_KERNELS_REFERENCE_H_
