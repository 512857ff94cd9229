#include "kernels/bit_quantize_ref.h"

#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace stratasim::kernels::reference {
namespace {

// A binary floating-point format without infinities in its saturating use: `mantissa` stored
// bits, exponent `bias`, smallest normal 2^(1 - bias), largest finite `max_finite`.
struct MiniFloat {
  int mantissa;
  int bias;
  double max_finite;
};
// Micikevicius et al. 2022, Table 1.
constexpr MiniFloat kE4M3{3, 7, 448.0};
constexpr MiniFloat kE5M2{2, 15, 57344.0};

// Round to nearest even on the format's grid, saturating at max_finite. The grid spacing in the
// binade of |x| is 2^(e - mantissa), and 2^(1 - bias - mantissa) among the subnormals; dividing
// by a power of two is exact, so nearbyint (round-half-even in the default mode) rounds exactly.
float RoundMiniFloat(float x, const MiniFloat& f) {
  if (std::isnan(x)) return x;
  const double a = std::fabs(static_cast<double>(x));
  if (a == 0) return x;
  const int min_exp = 1 - f.bias;
  int e = std::ilogb(a);
  if (e < min_exp) e = min_exp;
  const double spacing = std::ldexp(1.0, e - f.mantissa);
  double r = std::nearbyint(a / spacing) * spacing;
  if (r > f.max_finite) r = f.max_finite;
  return static_cast<float>(std::signbit(x) ? -r : r);
}

}  // namespace

std::string CheckBitPrecision(const BitPrecision& p) {
  if (p.format == BitFormat::kInt && (p.bits < 2 || p.bits > 8)) return "bits must be in [2, 8]";
  return "";
}

std::string ToString(const BitPrecision& p) {
  switch (p.format) {
    case BitFormat::kInt:
      return "int" + std::to_string(p.bits);
    case BitFormat::kFp8E4M3:
      return "fp8_e4m3";
    case BitFormat::kFp8E5M2:
      return "fp8_e5m2";
    case BitFormat::kFp16:
      return "fp16";
    case BitFormat::kBf16:
      return "bf16";
  }
  return "?";
}

std::optional<BitPrecision> ParseBitPrecision(std::string_view text) {
  if (text == "fp8_e4m3") return BitPrecision{BitFormat::kFp8E4M3, 8};
  if (text == "fp8_e5m2") return BitPrecision{BitFormat::kFp8E5M2, 8};
  if (text == "fp16") return BitPrecision{BitFormat::kFp16, 16};
  if (text == "bf16") return BitPrecision{BitFormat::kBf16, 16};
  if (text.size() == 4 && text.substr(0, 3) == "int" && text[3] >= '2' && text[3] <= '8')
    return BitPrecision{BitFormat::kInt, text[3] - '0'};
  return std::nullopt;
}

int IntMaxCode(int bits) { return (1 << (bits - 1)) - 1; }

float RoundFp8E4M3(float x) { return RoundMiniFloat(x, kE4M3); }
float RoundFp8E5M2(float x) { return RoundMiniFloat(x, kE5M2); }
float RoundFp16(float x) { return static_cast<float>(Eigen::half(x)); }
float RoundBf16(float x) { return static_cast<float>(Eigen::bfloat16(x)); }

std::uint8_t EncodeFp8E4M3(float x) {
  if (std::isnan(x)) return 0x7f;
  const float r = RoundFp8E4M3(x);
  const std::uint8_t sign = std::signbit(r) ? 0x80 : 0x00;
  const double a = std::fabs(static_cast<double>(r));
  if (a == 0) return sign;
  const int e = std::ilogb(a);
  if (e < 1 - kE4M3.bias) {  // subnormal: a = m * 2^(1 - bias - 3)
    return sign | static_cast<std::uint8_t>(std::ldexp(a, kE4M3.bias - 1 + kE4M3.mantissa));
  }
  const int m = static_cast<int>(std::ldexp(a, kE4M3.mantissa - e)) - (1 << kE4M3.mantissa);
  return sign | static_cast<std::uint8_t>(((e + kE4M3.bias) << kE4M3.mantissa) | m);
}

float DecodeFp8E4M3(std::uint8_t code) {
  const int exp = (code >> 3) & 0xf;
  const int man = code & 0x7;
  if (exp == 0xf && man == 0x7) return std::numeric_limits<float>::quiet_NaN();
  const double a = exp == 0 ? std::ldexp(man, 1 - kE4M3.bias - kE4M3.mantissa)
                            : std::ldexp(8 + man, exp - kE4M3.bias - kE4M3.mantissa);
  return static_cast<float>((code & 0x80) ? -a : a);
}

BitQuantized QuantizeDequantize(const std::vector<float>& x, const BitPrecision& p) {
  const std::string bad = CheckBitPrecision(p);
  if (!bad.empty()) throw Error("bit quantize " + ToString(p) + ": " + bad);
  BitQuantized out;
  out.values.resize(x.size());
  switch (p.format) {
    case BitFormat::kInt: {
      float absmax = 0;
      for (float v : x) absmax = std::fmax(absmax, std::fabs(v));
      const float qmax = static_cast<float>(IntMaxCode(p.bits));
      out.scale = absmax > 0 ? absmax / qmax : 1.0f;
      for (size_t i = 0; i < x.size(); ++i) {
        const float q = std::fmin(qmax, std::fmax(-qmax, std::nearbyint(x[i] / out.scale)));
        out.values[i] = q * out.scale;
      }
      return out;
    }
    case BitFormat::kFp8E4M3:
      for (size_t i = 0; i < x.size(); ++i) out.values[i] = RoundFp8E4M3(x[i]);
      return out;
    case BitFormat::kFp8E5M2:
      for (size_t i = 0; i < x.size(); ++i) out.values[i] = RoundFp8E5M2(x[i]);
      return out;
    case BitFormat::kFp16:
      for (size_t i = 0; i < x.size(); ++i) out.values[i] = RoundFp16(x[i]);
      return out;
    case BitFormat::kBf16:
      for (size_t i = 0; i < x.size(); ++i) out.values[i] = RoundBf16(x[i]);
      return out;
  }
  return out;
}

}  // namespace stratasim::kernels::reference
