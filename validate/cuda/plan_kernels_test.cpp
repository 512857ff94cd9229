// The cuda backend runs the work the plans describe: every compute task of real plans (the
// quickstart's DDP and a tensor-parallel GPT) maps to a kernel with the task's FLOPs, or its
// bytes for memory-bound work. Planning only, no device (runs in CI; full builds only, as it
// needs the scenario loader and the strategies).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/scenario.h"
#include "strategies/plan.h"
#include "validate/cuda/task_kernels.h"

namespace stratasim::validate::cuda {
namespace {

bool Whole(double v) { return v == std::floor(v); }

// Checks the scenario's strategies named in `only` (all when empty).
void ExpectKernelsCarryTheWork(const std::string& file, const std::vector<std::string>& only) {
  Scenario s = LoadScenarioFile(std::string(STRATASIM_SOURCE_DIR) + "/" + file);
  // The kernels of the unfused attention core; the fused one is validate mode's own (issue 19).
  s.model.attention = Attention::kUnfused;
  int checked = 0;
  for (const StrategySpec& spec : s.strategies) {
    if (!only.empty() && std::find(only.begin(), only.end(), spec.name) == only.end()) continue;
    ++checked;
    const Plan plan = PlanStrategy(s, spec);
    double task_flops = 0, kernel_flops = 0;
    int computes = 0;
    for (const Task& t : plan.graph.tasks()) {
      if (t.kind != TaskKind::kCompute) continue;
      ++computes;
      const std::string where = spec.name + ": task " + std::to_string(t.id) + " " + t.name;
      if (t.op == OpKind::kFusedAttention) {
        // cuDNN's fused forward, or the backward's GEMMs over the full square (task_kernels.h):
        // their FLOPs follow the kernels, not the plan's causal accounting, so they are left
        // out of the tally below. Without cuDNN the task is refused.
        if (!kernels::CudnnAvailable()) {
          EXPECT_THROW(PlanKernel(t), Error) << where;
          continue;
        }
        const KernelPlan k = PlanKernel(t);
        EXPECT_EQ(k.kind, t.phase == Phase::kBackward ? KernelKind::kFlashBackward
                                                      : KernelKind::kFlashForward)
            << where;
        continue;
      }
      const KernelPlan k = PlanKernel(t);
      if (t.gemm.known() && t.op != OpKind::kElementwise) {
        ASSERT_EQ(k.kind, KernelKind::kGemm) << where;
        // Whole-number shapes run exactly; a fractional one (a vocabulary split over tensor
        // ranks that does not divide, 50257 / 2) is rounded to the nearest whole GEMM.
        const bool whole = Whole(t.gemm.m) && Whole(t.gemm.n) && Whole(t.gemm.k);
        EXPECT_NEAR(k.flops, t.flops, (whole ? 1e-9 : 1e-3) * t.flops) << where;
      } else if (t.op == OpKind::kOptimizer) {
        ASSERT_EQ(k.kind, KernelKind::kAdam) << where;
        EXPECT_NEAR(k.flops, t.flops, 10) << where;
      } else if (t.bytes > 0) {
        // Memory-bound: the task's bytes, up to a row of the row-wise kernels or one element.
        EXPECT_NEAR(k.bytes, t.bytes, 2 * 4 * kRowLength + 8) << where;
      }
      task_flops += t.flops;
      kernel_flops += k.kind == KernelKind::kGemm || k.kind == KernelKind::kAdam ? k.flops : 0;
    }
    EXPECT_GT(computes, 0) << spec.name;
    // Elementwise kernels' own FLOPs aside, the GPU does the plan's FLOPs.
    EXPECT_NEAR(kernel_flops, task_flops, 1e-4 * task_flops) << spec.name;
  }
  EXPECT_EQ(checked,
            only.empty() ? static_cast<int>(s.strategies.size()) : static_cast<int>(only.size()));
}

TEST(PlanKernels, QuickstartTasksBecomeKernelsOfTheirWork) {
  ExpectKernelsCarryTheWork("scenarios/quickstart.yaml", {});
}

TEST(PlanKernels, TensorParallelTasksBecomeKernelsOfTheirWork) {
  // Megatron tensor parallelism with sequence parallelism: sharded GEMMs, a vocabulary split
  // over 8 ranks that does not divide (50257 / 8), the norms and dropouts on sequence shards.
  ExpectKernelsCarryTheWork("scenarios/gpt-3d.yaml", {"tp8-sp"});
}

}  // namespace
}  // namespace stratasim::validate::cuda
