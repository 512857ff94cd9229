#include "models/cnn.h"

#include <gtest/gtest.h>

#include "core/model_presets.h"
#include "models/test_util.h"

namespace stratasim {
namespace {

TEST(Cnn, ResNet50Has4Point1GigaMacsPerImage) {
  const ModelSpec m = *FindModelPreset("resnet50");
  const Workload w = BuildResNet50(m, 1, DType::kFP32);
  // 4.09 G multiply-adds forward for v1.5 at 224x224 (torchvision's reference figure; He et
  // al. 2016 give 3.8 G for v1, which strides the 1x1 convolution instead).
  EXPECT_NEAR(w.ForwardFlops() / 2 / 1e9, 4.09, 0.02);
  EXPECT_DOUBLE_EQ(w.params, 25557032);  // torchvision resnet50
  EXPECT_EQ(w.layers.size(), 1u + 16u + 1u);
  EXPECT_EQ(w.tokens_per_sample, 0);
  // Backward is twice forward (input and weight gradients); batch scales linearly.
  EXPECT_NEAR(w.BackwardFlops(), 2 * w.ForwardFlops(), 1e-9 * w.BackwardFlops());
  const Workload w32 = BuildResNet50(m, 32, DType::kFP32);
  EXPECT_NEAR(w32.ForwardFlops(), 32 * w.ForwardFlops(), 1e-9 * w32.ForwardFlops());
}

TEST(Cnn, Vgg16HasItsPublishedSize) {
  const ModelSpec m = *FindModelPreset("vgg16");
  const Workload w = BuildVgg16(m, 1, DType::kFP32);
  EXPECT_DOUBLE_EQ(w.params, 138357544);  // Simonyan & Zisserman 2015, Table 2: 138 M
  EXPECT_NEAR(w.ForwardFlops() / 2 / 1e9, 15.47, 0.05);
  EXPECT_EQ(w.layers.size(), 13u + 3u);
}

TEST(Cnn, ConvolutionsCarryTheirImplicitGemmShape) {
  const Workload w = BuildResNet50(*FindModelPreset("resnet50"), 8, DType::kBF16);
  const OpCost& stem = w.layers[0].ops[0];
  EXPECT_EQ(stem.forward.gemm.m, 8 * 112 * 112);  // output pixels
  EXPECT_EQ(stem.forward.gemm.n, 64);
  EXPECT_EQ(stem.forward.gemm.k, 3 * 7 * 7);
  EXPECT_GT(w.ActivationBytes(), 0);
}

TEST(Cnn, ImageSizeMustHalveFiveTimes) {
  ModelSpec m = *FindModelPreset("resnet50");
  m.image_size = 100;
  EXPECT_THROW(BuildResNet50(m, 1, DType::kFP32), ConfigError);
}

}  // namespace
}  // namespace stratasim
