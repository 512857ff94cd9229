// cuDNN's fused attention against the CPU reference (kernels/reference.h): O and the FP32 row
// statistics (logsumexp), with and without the causal mask, on a sequence that is not a
// multiple of the engine's tiles. Skips without a GPU.
#include "kernels/flash_attention.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/gpu_test_util.h"
#include "kernels/reference.h"

namespace stratasim::kernels {
namespace {

using testing::AllClose;
using testing::Download;
using testing::RandomVector;
using testing::UnitRoundoff;
using testing::Upload;

TEST(FlashAttention, CudnnIsBuiltIn) {
  EXPECT_TRUE(CudnnAvailable());
  EXPECT_EQ(CudnnUnavailableReason(), "");
}

TEST(FlashAttention, ForwardMatchesReference) {
  STRATASIM_REQUIRE_GPU();
  FlashAttention fa;
  for (DType dtype : {DType::kBF16, DType::kFP16}) {
    for (bool causal : {false, true}) {
      const FlashAttentionShape s{3, 100, 100, 64, causal};
      const std::size_t nq = s.batch * s.s_q * s.d, nkv = s.batch * s.s_kv * s.d;
      std::vector<float> q = RandomVector(nq, 1, -2, 2), k = RandomVector(nkv, 2, -2, 2),
                         v = RandomVector(nkv, 3, -1, 1);
      DeviceBuffer dq = Upload(dtype, q), dk = Upload(dtype, k), dv = Upload(dtype, v);
      DeviceBuffer dout(static_cast<std::size_t>(nq * BytesPerElement(dtype)));
      DeviceBuffer dstats(s.batch * s.s_q * sizeof(float));
      fa.PrepareForward(dtype, s);
      fa.Forward(dtype, s, dq.get(), dk.get(), dv.get(), dout.get(), dstats.as<float>(), nullptr);
      STRATASIM_CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<float> stats(s.batch * s.s_q);
      STRATASIM_CUDA_CHECK(cudaMemcpy(stats.data(), dstats.get(), stats.size() * sizeof(float),
                                      cudaMemcpyDeviceToHost));
      std::vector<float> want_o, want_lse;
      reference::AttentionForward(reference::AttentionDims{3, 100, 100, 64, causal}, q, k, v,
                                  want_o, want_lse);
      // O: P is rounded to the format before P·V, and O once more: a few units of roundoff.
      const double u = UnitRoundoff(dtype);
      EXPECT_TRUE(AllClose(Download(dtype, dout, nq), want_o, 4 * u, 4 * u)) << Describe(dtype, s);
      // The statistics stay FP32 (scores accumulate in FP32 on tensor cores).
      EXPECT_TRUE(AllClose(stats, want_lse, 1e-4, 1e-3)) << Describe(dtype, s);
    }
  }
}

TEST(FlashAttention, Fp32IsRefusedWithTheShape) {
  STRATASIM_REQUIRE_GPU();
  FlashAttention fa;
  try {
    fa.PrepareForward(DType::kFP32, FlashAttentionShape{2, 64, 64, 64, true});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "fp32 fused attention batch=2 s_q=64 s_kv=64 d=64 causal: cuDNN's fused "
                 "attention takes fp16 and bf16 only");
  }
}

}  // namespace
}  // namespace stratasim::kernels
