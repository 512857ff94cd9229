// Unbiased stochastic gradient quantizers on the CPU, the encoders and decoders of the qsgd and
// terngrad compressors (kernels/quant_compressors.cpp):
// - QSGD (Alistarh et al. 2017, "QSGD: Communication-Efficient SGD via Gradient Quantization
//   and Encoding", NeurIPS, Section 3.1): per bucket of `bucket` elements the L2 norm (FP32);
//   each element becomes sign(x) * l / s with l = floor(r) + Bernoulli(r - floor(r)),
//   r = |x| / norm * s, so E[decoded] = x. Sign and level are packed in QsgdBitsPerElement(s)
//   bits (core/compression.h).
// - TernGrad (Wen et al. 2017, "TernGrad: Ternary Gradients to Reduce Communication in
//   Distributed Deep Learning", NeurIPS, Eq. 2): per bucket the scale max|x| (FP32); each element
//   becomes scale * sign(x) * Bernoulli(|x| / scale), 2 bits. (The paper's gradient clipping at
//   2.5 sigma is a training-side option left out here: it biases the estimate.)
// The uniforms come from SplitMix64 seeded per (seed, worker, iteration) by RoundingSeed, drawn in
// element order, so the same inputs give the same codes.
#ifndef STRATASIM_KERNELS_STOCHASTIC_QUANT_REF_H_
#define STRATASIM_KERNELS_STOCHASTIC_QUANT_REF_H_

#include <cstdint>
#include <vector>

namespace stratasim::kernels::reference {

// The stream seed of one worker's rounding at one iteration.
std::uint64_t RoundingSeed(std::uint64_t seed, int worker, int iteration);

// One worker's payload: bit-packed codes and one FP32 scale (QSGD: norm; TernGrad: max|x|) per
// bucket.
struct StochasticCodes {
  std::vector<std::uint8_t> packed;
  std::vector<float> scales;
};

StochasticCodes QsgdEncode(const std::vector<float>& x, int levels, long long bucket,
                           std::uint64_t rounding_seed);
// sum[i] += the decoded value of element i (sum holds n values).
void QsgdDecodeAdd(const StochasticCodes& codes, int levels, long long bucket,
                   std::vector<float>& sum);

StochasticCodes TernGradEncode(const std::vector<float>& x, long long bucket,
                               std::uint64_t rounding_seed);
void TernGradDecodeAdd(const StochasticCodes& codes, long long bucket, std::vector<float>& sum);

}  // namespace stratasim::kernels::reference

#endif  // STRATASIM_KERNELS_STOCHASTIC_QUANT_REF_H_
