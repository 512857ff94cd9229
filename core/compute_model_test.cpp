#include "core/compute_model.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim {
namespace {

GpuSpec Gpu() {
  GpuSpec g;
  g.name = "G";
  g.peak_flops[DType::kBF16] = 100e12;
  g.memory_bandwidth_Bps = 1e12;
  return g;
}

TEST(ComputeModel, RooflineTakesTheSlowerOfMathAndMemory) {
  SimulationSpec s;
  s.compute_efficiency = 0.5;
  s.memory_efficiency = 0.5;
  s.kernel_launch_s = 1e-6;
  Task t;
  t.dtype = DType::kBF16;
  t.flops = 50e12;  // 1 s of math
  t.bytes = 1e11;   // 0.2 s of memory
  EXPECT_DOUBLE_EQ(ComputeTaskSeconds(t, Gpu(), s), 1.0 + 1e-6);
  t.bytes = 1e12;  // 2 s of memory
  EXPECT_DOUBLE_EQ(ComputeTaskSeconds(t, Gpu(), s), 2.0 + 1e-6);
}

TEST(ComputeModel, GemmQuantisationOverTilesAndWaves) {
  // 9 x 12 = 108 tiles of 128 x 128: exactly one wave on 108 SMs.
  EXPECT_DOUBLE_EQ(GemmQuantizationEfficiency(GemmShape{1152, 1536, 4096, 1}, 108), 1.0);
  // 9 x 13 = 117 tiles: two waves, the second with 9 of 108 SMs busy.
  EXPECT_DOUBLE_EQ(GemmQuantizationEfficiency(GemmShape{1152, 1664, 4096, 1}, 108), 117.0 / 216);
  // An edge of 130 needs two tiles of 128, the second nearly empty.
  EXPECT_DOUBLE_EQ(GemmQuantizationEfficiency(GemmShape{130, 128, 64, 1}, 1), 130.0 / 256);
  // Batched products fill waves together: 108 products of one tile each.
  EXPECT_DOUBLE_EQ(GemmQuantizationEfficiency(GemmShape{128, 128, 64, 108}, 108), 1.0);
  // Unknown shape or SM count: no effect.
  EXPECT_DOUBLE_EQ(GemmQuantizationEfficiency(GemmShape{}, 108), 1.0);
  EXPECT_DOUBLE_EQ(GemmQuantizationEfficiency(GemmShape{130, 128, 64, 1}, 0), 1.0);
}

TEST(ComputeModel, FusedAttentionWavesCountQueryTileBlocks) {
  // s = 1024, 16 sequences x heads: 8 query tiles x 16 = 128 blocks, each sweeping 8 key tiles.
  // On 108 SMs that is two waves, the second with 20 blocks (a GEMM over the 8 x 8 x 16 = 1024
  // score tiles would fill 10 waves of 108 nearly: 1024 / 1080).
  const GemmShape shape{1024, 1024, 64, 16};
  EXPECT_DOUBLE_EQ(FusedAttentionQuantizationEfficiency(shape, 108), 128.0 / 216);
  EXPECT_DOUBLE_EQ(GemmQuantizationEfficiency(shape, 108), 1024.0 / 1080);
  // A short last tile pads both edges: s = 130 is two tiles each way, one block per sequence
  // and head per query tile.
  EXPECT_DOUBLE_EQ(FusedAttentionQuantizationEfficiency(GemmShape{130, 130, 64, 1}, 2),
                   130.0 * 130 / (256 * 256));
  EXPECT_DOUBLE_EQ(FusedAttentionQuantizationEfficiency(GemmShape{}, 108), 1.0);
  EXPECT_DOUBLE_EQ(FusedAttentionQuantizationEfficiency(shape, 0), 1.0);

  // The cost model applies it to kFusedAttention tasks.
  SimulationSpec s;
  s.kernel_launch_s = 0;
  GpuSpec gpu = Gpu();
  gpu.sm_count = 108;
  Task t;
  t.op = OpKind::kFusedAttention;
  t.dtype = DType::kBF16;
  t.gemm = shape;
  t.flops = 7e12;
  EXPECT_DOUBLE_EQ(ComputeEfficiency(t, gpu, s), 0.7 * 128.0 / 216);
  EXPECT_DOUBLE_EQ(ComputeTaskSeconds(t, gpu, s), 7e12 / (100e12 * 0.7 * 128.0 / 216));
}

TEST(ComputeModel, SmallGemmsAchieveLessOfThePeak) {
  SimulationSpec s;
  s.kernel_launch_s = 0;
  GpuSpec gpu = Gpu();
  gpu.sm_count = 108;
  auto per_flop = [&](double m, double n, double k) {
    Task t;
    t.op = OpKind::kGemm;
    t.dtype = DType::kBF16;
    t.gemm = GemmShape{m, n, k, 1};
    t.flops = 2 * m * n * k;
    return ComputeTaskSeconds(t, gpu, s) / t.flops;
  };
  EXPECT_NEAR(per_flop(1152, 1536, 8192), 1 / (100e12 * 0.7), 1e-20);     // full wave
  EXPECT_GT(per_flop(128, 128, 8192), 100 * per_flop(1152, 1536, 8192));  // one SM of 108
  // Without a shape the task gets the large-GEMM efficiency.
  Task plain;
  plain.dtype = DType::kBF16;
  plain.flops = 7e13;
  EXPECT_DOUBLE_EQ(ComputeTaskSeconds(plain, gpu, s), 1.0);
}

TEST(ComputeModel, CalibrationOverridesDefaultsForTheGpuKindsItLists) {
  SimulationSpec s;
  s.compute_efficiency = 0.5;
  s.memory_efficiency = 0.5;
  s.kernel_launch_s = 1e-6;
  Calibration cal;
  GpuCalibration g;
  g.gpu = "G";
  g.compute[OpKind::kGemm] = {EfficiencyBand{1e12, 0.25}, EfficiencyBand{}};
  g.compute[OpKind::kGemm].back().efficiency = 0.8;
  g.memory_efficiency = 0.9;
  g.kernel_launch_s = 3e-6;
  cal.gpus.push_back(g);
  s.calibration = cal;

  Task small;
  small.op = OpKind::kGemm;
  small.dtype = DType::kBF16;
  small.flops = 1e12;                        // in the first band
  small.gemm = GemmShape{128, 128, 128, 1};  // measured: the shape model no longer applies
  EXPECT_DOUBLE_EQ(ComputeTaskSeconds(small, Gpu(), s), 1e12 / (100e12 * 0.25) + 3e-6);
  Task large = small;
  large.flops = 80e12;
  EXPECT_DOUBLE_EQ(ComputeTaskSeconds(large, Gpu(), s), 1.0 + 3e-6);
  Task copy;
  copy.op = OpKind::kElementwise;
  copy.bytes = 0.9e12;
  EXPECT_DOUBLE_EQ(ComputeTaskSeconds(copy, Gpu(), s), 1.0 + 3e-6);
  // An op kind the file has no table for keeps the scenario's compute efficiency.
  Task attention = small;
  attention.op = OpKind::kAttention;
  attention.gemm = GemmShape{};
  attention.flops = 50e12;
  EXPECT_DOUBLE_EQ(ComputeTaskSeconds(attention, Gpu(), s), 1.0 + 3e-6);
  // Another GPU kind keeps every default.
  GpuSpec other = Gpu();
  other.name = "H";
  EXPECT_DOUBLE_EQ(ComputeTaskSeconds(large, other, s), 80e12 / (100e12 * 0.5) + 1e-6);
}

TEST(ComputeModel, LowPrecisionUsesItsOwnPeak) {
  const GpuSpec& h100 = *FindBuiltinGpu("H100-SXM5");
  SimulationSpec s;
  s.compute_efficiency = 1;
  s.kernel_launch_s = 0;
  Task t;
  t.dtype = DType::kFP8;
  t.flops = 1979e12;
  EXPECT_DOUBLE_EQ(ComputeTaskSeconds(t, h100, s), 1.0);
  t.dtype = DType::kBF16;
  EXPECT_DOUBLE_EQ(ComputeTaskSeconds(t, h100, s), 1979.0 / 989);
  EXPECT_THROW(ComputeTaskSeconds(t, *FindBuiltinGpu("V100-SXM2"), s), Error);  // no BF16
}

TEST(ComputeModel, DtypeWithoutUnitsThrows) {
  Task t;
  t.dtype = DType::kFP8;
  t.flops = 1;
  EXPECT_THROW(ComputeTaskSeconds(t, Gpu(), SimulationSpec{}), Error);
}

}  // namespace
}  // namespace stratasim
