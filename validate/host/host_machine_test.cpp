#include "validate/host/host_machine.h"

#include <gtest/gtest.h>

#include "core/scenario.h"

namespace stratasim::validate::host {
namespace {

TEST(HostMachine, ProbeMeasuresPositiveFigures) {
  const HostMachine m = ProbeHostMachine();
  EXPECT_GE(m.hardware_threads, 1);
  EXPECT_GT(m.clock_hz, 0);
  EXPECT_EQ(m.estimated_flops, m.clock_hz * m.simd_fp32_lanes * 4);
  EXPECT_GT(m.measured_gemm_flops, 1e8);  // a 256^3 GEMM beats 100 MFLOP/s anywhere
  EXPECT_EQ(m.peak_flops, std::max(m.estimated_flops, m.measured_gemm_flops));
  EXPECT_GT(m.memory_bytes, 0);
  EXPECT_GT(m.memory_bandwidth_Bps, 1e8);  // any machine streams more than 100 MB/s
  EXPECT_GT(m.copy_bandwidth_Bps, 1e8);
  EXPECT_GT(m.handoff_latency_s, 0);
  EXPECT_LT(m.handoff_latency_s, 0.1);
}

TEST(HostMachine, WrittenClusterLoadsAsTheSameCluster) {
  HostMachine m;
  m.cpu_model = "test CPU";
  m.hardware_threads = 2;
  m.clock_hz = 2.1e9;
  m.isa = "sse2";
  m.peak_flops = 16.8e9;
  m.memory_bytes = 24e9;
  m.memory_bandwidth_Bps = 12.5e9;
  m.copy_bandwidth_Bps = 6.25e9;
  m.handoff_latency_s = 20e-6;
  const std::string yaml = "name: host\n" + HostClusterYaml(m, 2) +
                           "model: {preset: gpt2-medium}\n"
                           "training: {global_batch: 2, micro_batch: 1, precision: fp32}\n"
                           "strategies:\n  - {name: ddp, kind: ddp}\n";
  const Scenario s = LoadScenarioText(yaml, "host.yaml");
  const ClusterSpec want = HostClusterSpec(m, 2);
  EXPECT_EQ(s.cluster.NumGpus(), 2);
  const GpuSpec& gpu = s.cluster.GpuOfRank(0);
  EXPECT_EQ(gpu.name, "host-cpu");
  EXPECT_DOUBLE_EQ(gpu.Peak(DType::kFP32), 16.8e9);
  EXPECT_DOUBLE_EQ(gpu.Peak(DType::kBF16), 16.8e9);
  EXPECT_DOUBLE_EQ(gpu.memory_bytes, want.gpu_kinds[0].memory_bytes);
  EXPECT_DOUBLE_EQ(gpu.memory_bandwidth_Bps, 12.5e9);
  ASSERT_TRUE(s.cluster.groups[0].nvswitch);
  EXPECT_DOUBLE_EQ(s.cluster.groups[0].nvswitch->link.bandwidth_Bps, 6.25e9);
  EXPECT_DOUBLE_EQ(s.cluster.groups[0].nvswitch->link.latency_s, 20e-6);
  ASSERT_TRUE(s.cluster.groups[0].pcie);
  EXPECT_DOUBLE_EQ(s.cluster.groups[0].pcie->link.bandwidth_Bps, 6.25e9);
}

}  // namespace
}  // namespace stratasim::validate::host
