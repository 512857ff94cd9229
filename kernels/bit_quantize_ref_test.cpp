#include "kernels/bit_quantize_ref.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "models/split_mix64.h"

namespace stratasim::kernels::reference {
namespace {

std::vector<float> Uniform(std::size_t n, std::uint64_t seed, double lo, double hi) {
  SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(lo + (hi - lo) * rng.Unit());
  return v;
}

TEST(BitQuantizeRef, IntRoundsToNearestEvenOnTheAbsmaxGrid) {
  // absmax 7 with 4 bits: scale 1, codes in [-7, 7]; ties go to even.
  const BitQuantized q =
      QuantizeDequantize({-7, 3.5f, 2.5f, -2.5f, 0.4f, 6.6f, 0}, {BitFormat::kInt, 4});
  EXPECT_EQ(q.scale, 1.0f);
  EXPECT_EQ(q.values, (std::vector<float>{-7, 4, 2, -2, 0, 7, 0}));
  // 2 bits: codes -1, 0, 1 times absmax.
  const BitQuantized t = QuantizeDequantize({-2, 0.9f, 1.1f, 2}, {BitFormat::kInt, 2});
  EXPECT_EQ(t.scale, 2.0f);
  EXPECT_EQ(t.values, (std::vector<float>{-2, 0, 2, 2}));
  EXPECT_EQ(QuantizeDequantize({0, 0}, {BitFormat::kInt, 8}).scale, 1.0f);
}

TEST(BitQuantizeRef, IntErrorIsAtMostHalfAStep) {
  const std::vector<float> x = Uniform(10000, 3, -5, 5);
  for (int bits = 2; bits <= 8; ++bits) {
    const BitQuantized q = QuantizeDequantize(x, {BitFormat::kInt, bits});
    float absmax = 0;
    for (float v : x) absmax = std::max(absmax, std::fabs(v));
    EXPECT_FLOAT_EQ(q.scale, absmax / IntMaxCode(bits));
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      worst = std::max(worst, std::fabs(static_cast<double>(q.values[i]) - x[i]));
    EXPECT_LE(worst, q.scale * (0.5 + 1e-6)) << bits << " bits";
    EXPECT_GT(worst, q.scale * 0.4) << bits << " bits";  // the bound is tight on 10k values
  }
}

TEST(BitQuantizeRef, Fp8KnownValues) {
  EXPECT_EQ(RoundFp8E4M3(1.0f), 1.0f);
  EXPECT_EQ(RoundFp8E4M3(1.0625f), 1.0f);   // halfway to 1.125: even mantissa 0
  EXPECT_EQ(RoundFp8E4M3(1.1875f), 1.25f);  // halfway 1.125 / 1.25: even mantissa 2
  EXPECT_EQ(RoundFp8E4M3(448.0f), 448.0f);
  EXPECT_EQ(RoundFp8E4M3(1000.0f), 448.0f);  // saturates
  EXPECT_EQ(RoundFp8E4M3(-1e9f), -448.0f);
  EXPECT_EQ(RoundFp8E4M3(std::ldexp(1.0f, -9)), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_EQ(RoundFp8E4M3(std::ldexp(1.0f, -10)), 0.0f);                 // halfway to 0: even
  EXPECT_EQ(RoundFp8E4M3(std::ldexp(3.0f, -11)), std::ldexp(1.0f, -9));
  EXPECT_TRUE(std::isnan(RoundFp8E4M3(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(RoundFp8E5M2(1.125f), 1.0f);  // halfway 1 / 1.25: even
  EXPECT_EQ(RoundFp8E5M2(1.375f), 1.5f);  // halfway 1.25 / 1.5: even
  EXPECT_EQ(RoundFp8E5M2(57344.0f), 57344.0f);
  EXPECT_EQ(RoundFp8E5M2(1e6f), 57344.0f);
  EXPECT_EQ(RoundFp8E5M2(std::ldexp(1.0f, -16)), std::ldexp(1.0f, -16));
}

TEST(BitQuantizeRef, Fp16AndBf16KnownValues) {
  EXPECT_EQ(RoundFp16(1.0f + std::ldexp(1.0f, -11)), 1.0f);  // tie: even
  EXPECT_EQ(RoundFp16(1.0f + std::ldexp(3.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(RoundFp16(65504.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(RoundFp16(70000.0f)));
  EXPECT_EQ(RoundBf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);
  EXPECT_EQ(RoundBf16(1.0f + std::ldexp(3.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
}

// Relative error at most the unit roundoff 2^-(mantissa + 1) in each format's normal range.
TEST(BitQuantizeRef, FloatFormatsErrorWithinUnitRoundoff) {
  const std::vector<float> x = Uniform(20000, 5, -8, 8);
  const struct {
    BitFormat format;
    double unit_roundoff;
  } formats[] = {{BitFormat::kFp8E4M3, 0x1p-4},
                 {BitFormat::kFp8E5M2, 0x1p-3},
                 {BitFormat::kFp16, 0x1p-11},
                 {BitFormat::kBf16, 0x1p-8}};
  for (const auto& f : formats) {
    const BitQuantized q = QuantizeDequantize(x, {f.format, 8});
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (std::fabs(x[i]) < 0.02) continue;  // above every format's smallest normal
      worst = std::max(worst, std::fabs(static_cast<double>(q.values[i]) - x[i]) / std::fabs(x[i]));
    }
    EXPECT_LE(worst, f.unit_roundoff) << ToString(BitPrecision{f.format, 8});
    EXPECT_GT(worst, f.unit_roundoff * 0.8) << ToString(BitPrecision{f.format, 8});
  }
}

TEST(BitQuantizeRef, E4M3CodesRoundTrip) {
  for (int c = 0; c < 256; ++c) {
    const std::uint8_t code = static_cast<std::uint8_t>(c);
    const float v = DecodeFp8E4M3(code);
    if ((c & 0x7f) == 0x7f) {
      EXPECT_TRUE(std::isnan(v)) << c;
      continue;
    }
    EXPECT_EQ(EncodeFp8E4M3(v), code) << c;
    EXPECT_EQ(RoundFp8E4M3(v), v) << c;
  }
  EXPECT_EQ(DecodeFp8E4M3(0x7e), 448.0f);
  EXPECT_EQ(DecodeFp8E4M3(0x01), std::ldexp(1.0f, -9));
  for (float x : Uniform(1000, 9, -500, 500))
    EXPECT_EQ(DecodeFp8E4M3(EncodeFp8E4M3(x)), RoundFp8E4M3(x));
}

TEST(BitQuantizeRef, NamesParseAndBadBitsAreRefused) {
  for (const char* name : {"int2", "int8", "fp8_e4m3", "fp8_e5m2", "fp16", "bf16"}) {
    const auto p = ParseBitPrecision(name);
    ASSERT_TRUE(p.has_value()) << name;
    EXPECT_EQ(ToString(*p), name);
  }
  EXPECT_FALSE(ParseBitPrecision("int9").has_value());
  EXPECT_FALSE(ParseBitPrecision("int1").has_value());
  EXPECT_FALSE(ParseBitPrecision("fp4").has_value());
  try {
    QuantizeDequantize({1}, {BitFormat::kInt, 9});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "bit quantize int9: bits must be in [2, 8]");
  }
}

}  // namespace
}  // namespace stratasim::kernels::reference
