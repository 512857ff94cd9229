// Compute time passes in SimGrid and follows the roofline.
#include <gtest/gtest.h>

#include "core/task_graph.h"
#include "sim/executor.h"
#include "tests/test_clusters.h"

namespace stratasim {
namespace {

using testing::NvSwitchCluster;
using testing::NvSwitchOptions;

std::vector<double> RunKernels(const std::vector<Task>& kernels, const SimulationSpec& spec,
                               const std::string& gpu = "A100-SXM4-80GB") {
  NvSwitchOptions o;
  o.gpus_per_server = 1;
  o.nics = 1;
  o.gpu = gpu;
  TaskGraph g(1);
  std::vector<TaskId> ids;
  for (size_t i = 0; i < kernels.size(); ++i) {
    Task t = kernels[i];
    t.stream = g.Stream(t.name.str());
    ids.push_back(g.Add(t));
  }
  ExecutionTrace tr = sim::Simulate(g, NvSwitchCluster(o), spec);
  std::vector<double> durations;
  for (TaskId id : ids) durations.push_back(tr.records[id].end_s - tr.records[id].start_s);
  return durations;
}

Task Kernel(const std::string& name, double flops, double bytes, DType d) {
  Task t;
  t.kind = TaskKind::kCompute;
  t.name = name;
  t.flops = flops;
  t.bytes = bytes;
  t.dtype = d;
  return t;
}

TEST(ComputeModel, ComputeBoundTaskTakesFlopsOverPeakTimesEfficiency) {
  SimulationSpec spec;
  spec.compute_efficiency = 0.5;
  spec.kernel_launch_s = 0;
  const double flops = 1e15;
  const double d = RunKernels({Kernel("gemm", flops, 1e6, DType::kBF16)}, spec)[0];
  EXPECT_NEAR(d, flops / (312e12 * 0.5), 1e-6 * d);  // A100: 312 TFLOP/s BF16 dense
  const double d32 = RunKernels({Kernel("gemm", flops, 1e6, DType::kFP32)}, spec)[0];
  EXPECT_NEAR(d32, flops / (19.5e12 * 0.5), 1e-6 * d32);
}

TEST(ComputeModel, MemoryBoundTaskTakesBytesOverBandwidth) {
  SimulationSpec spec;
  spec.memory_efficiency = 0.8;
  spec.kernel_launch_s = 0;
  const double bytes = 10e9;
  const double d = RunKernels({Kernel("copy", 1e6, bytes, DType::kBF16)}, spec)[0];
  EXPECT_NEAR(d, bytes / (2039e9 * 0.8), 1e-6 * d);  // A100 80GB: 2,039 GB/s
}

TEST(ComputeModel, LaunchOverheadIsAdded) {
  SimulationSpec spec;
  spec.kernel_launch_s = 5e-6;
  const double d = RunKernels({Kernel("tiny", 1, 1, DType::kBF16)}, spec)[0];
  EXPECT_NEAR(d, 5e-6, 1e-9);
}

TEST(ComputeModel, ConcurrentKernelsOnOneGpuShareIt) {
  SimulationSpec spec;
  spec.compute_efficiency = 1;
  spec.kernel_launch_s = 0;
  const double flops = 312e12;  // one second alone
  const std::vector<double> d =
      RunKernels({Kernel("a", flops, 0, DType::kBF16), Kernel("b", flops, 0, DType::kBF16)}, spec);
  EXPECT_NEAR(d[0], 2.0, 1e-6);
  EXPECT_NEAR(d[1], 2.0, 1e-6);
}

TEST(ComputeModel, MissingUnitsAreAnError) {
  SimulationSpec spec;
  try {
    RunKernels({Kernel("fp8", 1e9, 0, DType::kFP8)}, spec, "A100-SXM4-80GB");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fp8"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stratasim
