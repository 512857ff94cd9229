// The blocked FlashAttention of the host backend against the plain reference
// (kernels/reference.h): forward O and logsumexp, backward dQ, dK, dV, with and without the
// causal mask, on sizes that are not multiples of the tiles.
#include "validate/host/host_attention.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/reference.h"

namespace stratasim::validate::host {
namespace {

std::vector<float> Lcg(std::size_t n, std::uint32_t seed, float amplitude) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = amplitude * (static_cast<float>(seed >> 8) / 8388608.0f - 1.0f);  // [-a, a)
  }
  return v;
}

// |got - want| <= atol + rtol * |want| everywhere; names the first mismatch.
::testing::AssertionResult Close(const std::vector<float>& got, const std::vector<float>& want,
                                 double rtol, double atol) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(static_cast<double>(got[i]) - want[i]) <= atol + rtol * std::fabs(want[i]))) {
      return ::testing::AssertionFailure()
             << "[" << i << "] got " << got[i] << " want " << want[i] << " of " << got.size();
    }
  }
  return ::testing::AssertionSuccess();
}

struct Case {
  long long batch, s_q, s_kv, d;
  bool causal;
  long long block_q, block_kv;
};

std::string Name(const Case& c) {
  return "batch " + std::to_string(c.batch) + " s_q " + std::to_string(c.s_q) + " s_kv " +
         std::to_string(c.s_kv) + " d " + std::to_string(c.d) + (c.causal ? " causal" : "") +
         " tiles " + std::to_string(c.block_q) + "x" + std::to_string(c.block_kv);
}

// Sizes not multiples of the tiles, tiles larger than the sequence, one-row tiles, and more
// keys than queries; scores spread over about +-8 (amplitude 2, d up to 16, / sqrt(d)) so the
// online softmax rescales its running sums as the row maximum moves.
const Case kCases[] = {
    {2, 37, 37, 5, false, 8, 16},  {2, 37, 37, 5, true, 8, 16}, {1, 13, 29, 7, false, 4, 5},
    {1, 50, 50, 16, true, 64, 64}, {1, 50, 50, 16, true, 7, 3}, {3, 9, 9, 3, true, 1, 1},
    {1, 64, 64, 8, false, 16, 16},
};

struct Tensors {
  std::vector<float> q, k, v, dout;
};

Tensors Inputs(const Case& c) {
  const std::size_t nq = c.batch * c.s_q * c.d, nkv = c.batch * c.s_kv * c.d;
  return Tensors{Lcg(nq, 11, 2), Lcg(nkv, 12, 2), Lcg(nkv, 13, 1), Lcg(nq, 14, 1)};
}

FusedAttentionDims DimsOf(const Case& c) {
  FusedAttentionDims d;
  d.batch = c.batch;
  d.s_q = c.s_q;
  d.s_kv = c.s_kv;
  d.d = c.d;
  d.causal = c.causal;
  d.block_q = c.block_q;
  d.block_kv = c.block_kv;
  return d;
}

kernels::reference::AttentionDims RefDims(const Case& c) {
  return kernels::reference::AttentionDims{static_cast<int>(c.batch), static_cast<int>(c.s_q),
                                           static_cast<int>(c.s_kv), static_cast<int>(c.d),
                                           c.causal};
}

// FP32 tolerances: every output is a sum of at most s_kv (or s_q) products accumulated in
// float, with exp and the online rescaling adding a few ulps each; the reference is double.
// The values are O(1), so a few hundred ulps of 2^-24 is far inside 1e-5.
constexpr double kRtol = 1e-5, kAtol = 1e-5;

TEST(HostAttention, BlockedForwardMatchesReference) {
  for (const Case& c : kCases) {
    const Tensors in = Inputs(c);
    std::vector<float> o(in.q.size()), lse(c.batch * c.s_q);
    const FusedAttentionDims dims = DimsOf(c);
    std::vector<float> scratch(static_cast<std::size_t>(FusedAttentionScratchFloats(dims, false)));
    FusedAttentionForward(DType::kFP32, dims, in.q.data(), in.k.data(), in.v.data(), o.data(),
                          lse.data(), scratch.data());
    std::vector<float> want_o, want_lse;
    kernels::reference::AttentionForward(RefDims(c), in.q, in.k, in.v, want_o, want_lse);
    EXPECT_TRUE(Close(o, want_o, kRtol, kAtol)) << "O, " << Name(c);
    EXPECT_TRUE(Close(lse, want_lse, kRtol, kAtol)) << "lse, " << Name(c);
  }
}

TEST(HostAttention, BlockedBackwardMatchesReference) {
  for (const Case& c : kCases) {
    const Tensors in = Inputs(c);
    const FusedAttentionDims dims = DimsOf(c);
    std::vector<float> o(in.q.size()), lse(c.batch * c.s_q);
    std::vector<float> scratch(static_cast<std::size_t>(FusedAttentionScratchFloats(dims, true)));
    FusedAttentionForward(DType::kFP32, dims, in.q.data(), in.k.data(), in.v.data(), o.data(),
                          lse.data(), scratch.data());
    std::vector<float> dq(in.q.size()), dk(in.k.size()), dv(in.v.size());
    FusedAttentionBackward(DType::kFP32, dims, in.q.data(), in.k.data(), in.v.data(), o.data(),
                           in.dout.data(), lse.data(), dq.data(), dk.data(), dv.data(),
                           scratch.data());
    std::vector<float> want_dq, want_dk, want_dv;
    kernels::reference::AttentionBackward(RefDims(c), in.q, in.k, in.v, in.dout, want_dq, want_dk,
                                          want_dv);
    EXPECT_TRUE(Close(dq, want_dq, kRtol, kAtol)) << "dQ, " << Name(c);
    EXPECT_TRUE(Close(dk, want_dk, kRtol, kAtol)) << "dK, " << Name(c);
    EXPECT_TRUE(Close(dv, want_dv, kRtol, kAtol)) << "dV, " << Name(c);
  }
}

// BF16 storage: the inputs rounded to BF16 are what both sides see; the kernel's outputs are
// rounded to BF16 once (half an ulp: at most 2^-8 relative, 8 significant bits), its
// logsumexp stays FP32.
TEST(HostAttention, Bf16StorageRoundsOnlyTheOutputs) {
  const Case c{2, 37, 37, 8, true, 16, 8};
  Tensors in = Inputs(c);
  auto to_bf16 = [](std::vector<float>& x) {
    std::vector<Eigen::bfloat16> out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      out[i] = Eigen::bfloat16(x[i]);
      x[i] = static_cast<float>(out[i]);
    }
    return out;
  };
  auto to_float = [](const std::vector<Eigen::bfloat16>& x) {
    std::vector<float> out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) out[i] = static_cast<float>(x[i]);
    return out;
  };
  const auto q = to_bf16(in.q), k = to_bf16(in.k), v = to_bf16(in.v), dout = to_bf16(in.dout);
  const FusedAttentionDims dims = DimsOf(c);
  std::vector<Eigen::bfloat16> o(q.size()), dq(q.size()), dk(k.size()), dv(v.size());
  std::vector<float> lse(c.batch * c.s_q);
  std::vector<float> scratch(static_cast<std::size_t>(FusedAttentionScratchFloats(dims, true)));
  FusedAttentionForward(DType::kBF16, dims, q.data(), k.data(), v.data(), o.data(), lse.data(),
                        scratch.data());
  FusedAttentionBackward(DType::kBF16, dims, q.data(), k.data(), v.data(), o.data(), dout.data(),
                         lse.data(), dq.data(), dk.data(), dv.data(), scratch.data());
  std::vector<float> want_o, want_lse, want_dq, want_dk, want_dv;
  kernels::reference::AttentionForward(RefDims(c), in.q, in.k, in.v, want_o, want_lse);
  kernels::reference::AttentionBackward(RefDims(c), in.q, in.k, in.v, in.dout, want_dq, want_dk,
                                        want_dv);
  const double half_ulp = std::ldexp(1.0, -8);
  EXPECT_TRUE(Close(to_float(o), want_o, half_ulp, kAtol));
  EXPECT_TRUE(Close(lse, want_lse, kRtol, kAtol));
  // The backward reads the BF16-rounded O for its D = rowsum(dO * O): an error of 2^-8 |O| per
  // term, which moves the gradients by about that much of their scale.
  EXPECT_TRUE(Close(to_float(dq), want_dq, 4 * half_ulp, 1e-3));
  EXPECT_TRUE(Close(to_float(dk), want_dk, 4 * half_ulp, 1e-3));
  EXPECT_TRUE(Close(to_float(dv), want_dv, half_ulp, kAtol));
}

TEST(HostAttention, ScratchIsLinearInTheSequence) {
  // Doubling s doubles the scratch (less the fixed tiles): never s^2.
  FusedAttentionDims a;
  a.s_q = a.s_kv = 4096;
  a.d = 128;
  FusedAttentionDims b = a;
  b.s_q = b.s_kv = 8192;
  for (bool backward : {false, true}) {
    const double tiles = FusedAttentionScratchFloats(FusedAttentionDims{1, 1, 1, 128}, backward);
    EXPECT_LT(FusedAttentionScratchFloats(b, backward),
              2 * FusedAttentionScratchFloats(a, backward) + tiles);
    EXPECT_LT(FusedAttentionScratchFloats(a, backward), 8.0 * 4096 * 128);
  }
}

std::string ErrorOf(DType dtype, const FusedAttentionDims& dims) {
  try {
    CheckFusedAttention(dtype, dims);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(HostAttention, BadInputsAreRefusedWithTheReason) {
  FusedAttentionDims dims;
  dims.s_q = dims.s_kv = 8;
  dims.d = 4;
  EXPECT_EQ(ErrorOf(DType::kFP32, dims), "no error");
  EXPECT_EQ(ErrorOf(DType::kINT8, dims),
            "fused attention: no CPU kernel for dtype int8 (it runs fp32, tf32, fp16 and bf16)");
  FusedAttentionDims zero = dims;
  zero.d = 0;
  EXPECT_EQ(ErrorOf(DType::kFP32, zero),
            "fused attention: batch 1, s_q 8, s_kv 8, d 0 and tiles 64 x 64 must all be >= 1");
  FusedAttentionDims uneven = dims;
  uneven.causal = true;
  uneven.s_kv = 9;
  EXPECT_EQ(ErrorOf(DType::kBF16, uneven),
            "fused attention: a causal mask needs as many queries as keys (s_q 8, s_kv 9)");
}

}  // namespace
}  // namespace stratasim::validate::host
