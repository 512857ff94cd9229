// Low-precision rounding on the CPU: the reference of kernels/bit_quantize.h and the format
// conversions the fp16/fp8 gradient compressors use (kernels/quant_compressors.cpp).
//
// DPC (Decreasing Precision with layer Capacity, Frontiers of Computer Science 2025) trains each
// layer at its own bit width; what a layer's tensor goes through is a quantize/dequantize to
// that width: symmetric uniform b-bit integers with one per-tensor absmax scale (b in [2, 8]),
// or rounding to a floating-point format (FP8 E4M3 or E5M2, FP16, BF16).
#ifndef STRATASIM_KERNELS_BIT_QUANTIZE_REF_H_
#define STRATASIM_KERNELS_BIT_QUANTIZE_REF_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stratasim::kernels::reference {

enum class BitFormat { kInt, kFp8E4M3, kFp8E5M2, kFp16, kBf16 };

struct BitPrecision {
  BitFormat format = BitFormat::kInt;
  int bits = 8;  // kInt only: 2..8
};

// An empty string when valid, else the rule broken ("bits must be in [2, 8]").
std::string CheckBitPrecision(const BitPrecision& p);
// "int<b>", "fp8_e4m3", "fp8_e5m2", "fp16", "bf16".
std::string ToString(const BitPrecision& p);
std::optional<BitPrecision> ParseBitPrecision(std::string_view text);

// Largest integer code of b-bit symmetric quantization: 2^(b-1) - 1 (the code -2^(b-1) is left
// unused so the grid is symmetric, as in per-tensor symmetric INT8 of TensorRT and PyTorch).
int IntMaxCode(int bits);

// Round to nearest even in each format. FP8 saturates to the largest finite value (E4M3: 448,
// E5M2: 57344), as cuda_fp8.h's __NV_SATFINITE conversions and Transformer Engine's casts do;
// FP16 and BF16 overflow to infinity, as __float2half_rn and __float2bfloat16_rn do. NaN stays
// NaN. (Micikevicius et al. 2022, "FP8 Formats for Deep Learning", Table 1.)
float RoundFp8E4M3(float x);
float RoundFp8E5M2(float x);
float RoundFp16(float x);
float RoundBf16(float x);

// E4M3 bit patterns (sign, 4 exponent bits with bias 7, 3 mantissa bits; 0x7f and 0xff are
// NaN): the one-byte codes of the fp8 compressor.
std::uint8_t EncodeFp8E4M3(float x);
float DecodeFp8E4M3(std::uint8_t code);

// The quantize/dequantize of one layer's tensor: values as the layer computes with them, and
// (kInt) the scale, absmax / IntMaxCode(bits) (1 for an all-zero tensor); q = round-to-nearest-
// even(x / scale), clamped to +-IntMaxCode, value = q * scale, in FP32 arithmetic as the CUDA
// kernel does. Float formats: scale 1 and each value rounded. Throws Error for an invalid p.
struct BitQuantized {
  std::vector<float> values;
  float scale = 1.0f;
};
BitQuantized QuantizeDequantize(const std::vector<float>& x, const BitPrecision& p);

}  // namespace stratasim::kernels::reference

#endif  // STRATASIM_KERNELS_BIT_QUANTIZE_REF_H_
