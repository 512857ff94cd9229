#include "sim/compute_model.h"

#include <algorithm>

namespace stratasim::sim {

double ComputeTaskSeconds(const Task& t, const GpuSpec& gpu, const SimulationSpec& s) {
  double math_s = 0;
  if (t.flops > 0) math_s = t.flops / (gpu.Peak(t.dtype) * s.compute_efficiency);
  double memory_s = 0;
  if (t.bytes > 0) memory_s = t.bytes / (gpu.memory_bandwidth_Bps * s.memory_efficiency);
  return std::max(math_s, memory_s) + s.kernel_launch_s;
}

}  // namespace stratasim::sim
