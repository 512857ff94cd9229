// How long a compute task keeps a GPU busy when it runs alone: a roofline.
//
//   t = max(flops / (peak(dtype) * compute_efficiency),
//           bytes / (memory_bandwidth * memory_efficiency)) + kernel_launch
//
// The executor hands this to SimGrid as work on the GPU host, so concurrent kernels on one GPU
// share it and the time passes in the simulation. Efficiencies are scenario parameters (see
// core/scenario.h) to be replaced by calibrated values.
#ifndef STRATASIM_SIM_COMPUTE_MODEL_H_
#define STRATASIM_SIM_COMPUTE_MODEL_H_

#include "core/hardware.h"
#include "core/scenario.h"
#include "core/task_graph.h"

namespace stratasim::sim {

// Throws stratasim::Error when the GPU has no units for the task's dtype.
double ComputeTaskSeconds(const Task& t, const GpuSpec& gpu, const SimulationSpec& s);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COMPUTE_MODEL_H_
