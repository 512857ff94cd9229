#include "core/compute_model.h"

#include <algorithm>
#include <cmath>

namespace stratasim {
namespace {

const GpuCalibration* CalibrationOf(const GpuSpec& gpu, const SimulationSpec& s) {
  return s.calibration ? s.calibration->FindGpu(gpu.name) : nullptr;
}

}  // namespace

double GemmQuantizationEfficiency(const GemmShape& g, int sm_count) {
  if (!g.known() || sm_count <= 0) return 1;
  const double tiles_m = std::ceil(g.m / kGemmTile), tiles_n = std::ceil(g.n / kGemmTile);
  const double tile_eff = (g.m * g.n) / (tiles_m * kGemmTile * tiles_n * kGemmTile);
  const double tiles = tiles_m * tiles_n * std::max(1.0, g.batch);
  const double waves = std::ceil(tiles / sm_count);
  return tile_eff * tiles / (waves * sm_count);
}

double FusedAttentionQuantizationEfficiency(const GemmShape& g, int sm_count) {
  if (!g.known() || sm_count <= 0) return 1;
  const double tiles_m = std::ceil(g.m / kGemmTile), tiles_n = std::ceil(g.n / kGemmTile);
  const double tile_eff = (g.m * g.n) / (tiles_m * kGemmTile * tiles_n * kGemmTile);
  const double blocks = tiles_m * std::max(1.0, g.batch);
  const double waves = std::ceil(blocks / sm_count);
  return tile_eff * blocks / (waves * sm_count);
}

double ComputeEfficiency(const Task& t, const GpuSpec& gpu, const SimulationSpec& s) {
  if (const GpuCalibration* cal = CalibrationOf(gpu, s)) {
    if (auto measured = cal->ComputeEfficiency(t.op, t.flops)) return *measured;
  }
  const double quantization = t.op == OpKind::kFusedAttention
                                  ? FusedAttentionQuantizationEfficiency(t.gemm, gpu.sm_count)
                                  : GemmQuantizationEfficiency(t.gemm, gpu.sm_count);
  return s.compute_efficiency * quantization;
}

double ComputeTaskSeconds(const Task& t, const GpuSpec& gpu, const SimulationSpec& s) {
  const GpuCalibration* cal = CalibrationOf(gpu, s);
  const double memory_efficiency =
      cal && cal->memory_efficiency ? *cal->memory_efficiency : s.memory_efficiency;
  const double launch_s = cal && cal->kernel_launch_s ? *cal->kernel_launch_s : s.kernel_launch_s;
  double math_s = 0;
  if (t.flops > 0) math_s = t.flops / (gpu.Peak(t.dtype) * ComputeEfficiency(t, gpu, s));
  double memory_s = 0;
  if (t.bytes > 0) memory_s = t.bytes / (gpu.memory_bandwidth_Bps * memory_efficiency);
  return std::max(math_s, memory_s) + launch_s;
}

}  // namespace stratasim
