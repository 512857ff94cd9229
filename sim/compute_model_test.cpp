#include "sim/compute_model.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim::sim {
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

TEST(ComputeModel, DtypeWithoutUnitsThrows) {
  Task t;
  t.dtype = DType::kFP8;
  t.flops = 1;
  EXPECT_THROW(ComputeTaskSeconds(t, Gpu(), SimulationSpec{}), Error);
}

}  // namespace
}  // namespace stratasim::sim
