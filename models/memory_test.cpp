#include "models/memory.h"

#include <gtest/gtest.h>

#include "models/test_util.h"

namespace stratasim {
namespace {

TEST(Memory, MixedPrecisionAdamIs16BytesPerParameter) {
  const ModelStateBytes b = AdamStateBytes(1e9, DType::kBF16);
  EXPECT_DOUBLE_EQ(b.weights, 2e9);
  EXPECT_DOUBLE_EQ(b.gradients, 2e9);
  EXPECT_DOUBLE_EQ(b.optimizer, 12e9);  // FP32 master, momentum, variance
  EXPECT_DOUBLE_EQ(b.Total(), 16e9);
  EXPECT_DOUBLE_EQ(AdamStateBytes(1e9, DType::kFP32).Total(), 16e9);  // 4 + 4 + 8
  // BF16 weights and gradients, FP32 master and moments, and the FP8 weight copy.
  EXPECT_DOUBLE_EQ(AdamStateBytes(1e9, DType::kFP8).Total(), 17e9);
  EXPECT_DOUBLE_EQ(AdamStateBytes(1e9, DType::kFP8).weights, 3e9);
  EXPECT_DOUBLE_EQ(AdamStateBytes(1e9, DType::kFP8, {4, 1, 1}).weights, 0.75e9);
}

TEST(Memory, ZeroStagesDivideTheirPart) {
  // ZeRO paper, Figure 1: 7.5B parameters on 64 GPUs: 120 GB baseline, 31.4 GB with stage 1
  // (P_os), 16.6 GB with stage 2 (P_os+g), 1.9 GB with stage 3 (P_os+g+p).
  const double psi = 7.5e9;
  EXPECT_NEAR(AdamStateBytes(psi, DType::kFP16).Total() / 1e9, 120, 0.1);
  EXPECT_NEAR(AdamStateBytes(psi, DType::kFP16, {1, 1, 64}).Total() / 1e9, 31.4, 0.1);
  EXPECT_NEAR(AdamStateBytes(psi, DType::kFP16, {1, 64, 64}).Total() / 1e9, 16.6, 0.1);
  EXPECT_NEAR(AdamStateBytes(psi, DType::kFP16, {64, 64, 64}).Total() / 1e9, 1.9, 0.1);
}

TEST(Memory, PeakActivationsCountMicroBatchesInFlightAndOneReCreatedLayer) {
  ModelSpec m = testing::Transformer("gpt", 4, 512, 8, 256, 1000);
  m.recompute = Recompute::kFull;
  const Workload w = BuildWorkload(m, 2, DType::kBF16);
  EXPECT_DOUBLE_EQ(PeakActivationBytes(w, 3),
                   3 * w.ActivationBytes() + w.layers[1].recomputed_bytes);
}

}  // namespace
}  // namespace stratasim
