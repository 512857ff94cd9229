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

// Scaled dot-product attention, the plain way (full score matrix, double precision), against
// which the fused kernels (host: validate/host/host_attention.h; cuda: kernels/flash_attention.h)
// are checked. Per batch entry, row-major: Q, O, dO, dQ [s_q][d]; K, V, dK, dV [s_kv][d];
// entries packed one after the other. S = Q K^T / sqrt(d), with `causal` S[i][j] = -inf for
// j > i (needs s_q == s_kv); P = softmax(S) by rows; O = P V; lse[i] = log sum_j exp(S[i][j]).
struct AttentionDims {
  int batch = 1;
  int s_q = 0;
  int s_kv = 0;
  int d = 0;
  bool causal = false;
};
void AttentionForward(const AttentionDims& dims, const std::vector<float>& q,
                      const std::vector<float>& k, const std::vector<float>& v,
                      std::vector<float>& o, std::vector<float>& lse);
// Gradients of sum(O * dO) from the full P: dV = P^T dO, dP = dO V^T,
// dS = P * (dP - rowsum(P * dP)), dQ = dS K / sqrt(d), dK = dS^T Q / sqrt(d).
void AttentionBackward(const AttentionDims& dims, const std::vector<float>& q,
                       const std::vector<float>& k, const std::vector<float>& v,
                       const std::vector<float>& dout, std::vector<float>& dq,
                       std::vector<float>& dk, std::vector<float>& dv);

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
