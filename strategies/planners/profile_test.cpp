#include "strategies/planners/profile.h"

#include <gtest/gtest.h>

#include "core/compute_model.h"
#include "strategies/layer_tasks.h"
#include "strategies/test_scenario.h"

namespace stratasim::planners {
namespace {

Scenario Tiny(int servers = 1) {
  testing::TinyGpt t;
  t.servers = servers;
  Scenario s = testing::TinyGptScenario(t);
  s.cluster.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  return s;
}

TEST(PlannerProfile, BlocksAreTheEmbeddingTheLayerHalvesAndTheHead) {
  const Scenario s = Tiny();
  const Workload w = PlannerBlocks(s, 1, false, 1);
  // Embedding, 4 layers x (attention, MLP), head.
  ASSERT_EQ(w.layers.size(), 10u);
  EXPECT_EQ(w.layers[1].name.substr(w.layers[1].name.size() - 5), ".attn");
  EXPECT_EQ(w.layers[2].name.substr(w.layers[2].name.size() - 4), ".mlp");
}

TEST(PlannerProfile, ABlockTakesItsKernelsTimesOnTheGpuKind) {
  const Scenario s = Tiny();
  const Workload w = PlannerBlocks(s, 1, false, 1);
  const CostProfile p = ProfileBlocks(s, w, 1, false);
  ASSERT_EQ(p.kinds, std::vector<std::string>{"A100-SXM4-80GB"});
  ASSERT_EQ(p.Blocks(), 10);
  const LayerCost& mlp = w.layers[2];
  double forward = 0;
  for (const OpCost& op : mlp.ops) {
    if (op.forward.empty()) continue;
    forward += ComputeTaskSeconds(
        KernelTask(TaskPlace{}, op.name, op.kind, w.dtype, op.forward, Phase::kForward),
        s.cluster.gpu_kinds[0], s.simulation);
  }
  const BlockCost& b = p.costs[0][2];
  EXPECT_DOUBLE_EQ(b.forward_s, forward);
  EXPECT_GT(b.backward_s, b.forward_s);
  EXPECT_DOUBLE_EQ(b.recompute_s, b.forward_s);
  EXPECT_DOUBLE_EQ(b.params, mlp.params);
  EXPECT_DOUBLE_EQ(b.output_bytes, w.layers[3].input_bytes);
  EXPECT_FALSE(p.costs[0][0].recomputable);  // the embedding
  EXPECT_DOUBLE_EQ(p.costs[0][0].recompute_s, 0);
  EXPECT_DOUBLE_EQ(p.state_bytes_per_param, 16);
}

TEST(PlannerProfile, ACalibrationFileChangesTheProfile) {
  // Validate mode's calibration of the A100 with GEMMs at a measured 10% of peak: the blocks
  // are timed with it, as the simulator times their kernels.
  Scenario s = Tiny();
  const Workload w = PlannerBlocks(s, 1, false, 1);
  const CostProfile before = ProfileBlocks(s, w, 1, false);
  Calibration cal;
  GpuCalibration g;
  g.gpu = "A100-SXM4-80GB";
  g.compute[OpKind::kGemm] = {EfficiencyBand{}};
  g.compute[OpKind::kGemm].back().efficiency = 0.1;
  cal.gpus.push_back(g);
  s.simulation.calibration = cal;
  const CostProfile after = ProfileBlocks(s, w, 1, false);
  double forward = 0;
  for (const OpCost& op : w.layers[2].ops) {
    if (op.forward.empty()) continue;
    forward += ComputeTaskSeconds(
        KernelTask(TaskPlace{}, op.name, op.kind, w.dtype, op.forward, Phase::kForward),
        s.cluster.gpu_kinds[0], s.simulation);
  }
  EXPECT_DOUBLE_EQ(after.costs[0][2].forward_s, forward);
  EXPECT_NE(after.costs[0][2].forward_s, before.costs[0][2].forward_s);
}

TEST(PlannerProfile, TensorParallelBlocksPayTheirRingAllReduces) {
  const Scenario s = Tiny();
  const CostProfile fast = ProfileBlocks(s, PlannerBlocks(s, 2, false, 1), 2, false);
  // Make the links slow enough that the collectives dominate: 1 GB/s, no latency.
  Scenario slow = s;
  slow.cluster.groups[0].nvswitch->link = LinkSpec{1e9, 0};
  const CostProfile two = ProfileBlocks(slow, PlannerBlocks(slow, 2, false, 1), 2, false);
  // The MLP half: one all-reduce after mlp_down forward, one after mlp_up's input gradient, of
  // b s h = 128 x 256 BF16 elements; a ring of 2 sends half of it twice: 2 x 32 KiB at 1 GB/s.
  // `one` has the same collectives over 300 GB/s with 1 us per step.
  const double half = 128 * 256 * 2 / 2.0;
  const double ring = 2 * half / 1e9 - 2 * (half / 300e9 + 1e-6);
  EXPECT_NEAR(two.costs[0][2].forward_s - fast.costs[0][2].forward_s, ring, 1e-3 * ring);
  EXPECT_NEAR(two.costs[0][2].backward_s - fast.costs[0][2].backward_s, ring, 1e-3 * ring);
}

TEST(PlannerProfile, TheClusterViewHasEachGpusServerNicAndMemory) {
  Scenario s = Tiny(2);
  s.cluster.groups[0].nics.count = 2;
  s.cluster.groups[0].nics.link = LinkSpec{25e9, 2e-6};
  const PlannerInput in = BuildPlannerInput(s, PlannerDegrees{2, 1, 8, 4, false});
  ASSERT_EQ(in.cluster.Gpus(), 16);
  ASSERT_EQ(in.cluster.Servers(), 2);
  EXPECT_EQ(in.cluster.devices[9].server, 1);
  EXPECT_EQ(in.cluster.devices[3].nic, 0);
  EXPECT_EQ(in.cluster.devices[4].nic, 1);
  EXPECT_EQ(in.cluster.devices[12].nic, 3);
  EXPECT_EQ(in.cluster.devices[0].pcie_switch, -1);
  EXPECT_DOUBLE_EQ(in.cluster.devices[0].memory_bytes, 80e9);
  EXPECT_DOUBLE_EQ(in.cluster.nic_Bps[2], 25e9);
  EXPECT_DOUBLE_EQ(in.cluster.intra_Bps[1], 300e9);
  EXPECT_EQ(in.micro_batches, 4);
}

}  // namespace
}  // namespace stratasim::planners
