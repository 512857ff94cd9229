#include "strategies/pipeline/pipeline_lowering.h"

#include <gtest/gtest.h>

#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

// Two stages on 2 GPUs, one replica, 2 micro-batches of 1.
struct TwoStages {
  Scenario s = testing::TinyGptScenario({2, 1, 2, 1, 4, 4});
  PipelineShape o;
  TwoStages() {
    o.p = 2;
    o.m = 2;
    o.schedule = "1f1b";
    o.order = "tpd";
    o.bucket_cap = 25.0 * 1024 * 1024;
  }
  Workload StageWorkload(Recompute mode) const {
    ModelSpec model = s.model;
    model.recompute = mode;
    return BuildWorkload(model, 1, DType::kBF16);
  }
};

// Forward and backward FLOPs each rank computes.
std::vector<double> FlopsPerRank(const Plan& plan) {
  std::vector<double> flops(plan.graph.num_ranks(), 0);
  for (const Task& t : plan.graph.tasks()) {
    if (t.kind == TaskKind::kCompute) flops[t.rank] += t.flops;
  }
  return flops;
}

TEST(PipelineLowering, SplitsTheLayersWhereTheBoundsSay) {
  TwoStages f;
  const Workload w = f.StageWorkload(Recompute::kNone);
  const int n = static_cast<int>(w.layers.size());
  const Plan plan = PipelineLowering(f.s, f.o, w, {}, {0, 2, n}).Lower();
  plan.graph.Validate();
  EXPECT_EQ(plan.rank_stage, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.samples_per_iteration, 2);
  ASSERT_GE(plan.notes.size(), 2u);
  const std::string split = "workload layers per stage: 2," + std::to_string(n - 2) + ";";
  EXPECT_EQ(plan.notes[1].substr(0, split.size()), split);
  // Workload layers 0 and 1 are the embedding and transformer layer 0; layer 1 starts stage 1.
  std::vector<int> layer1_on(2, 0);
  for (const Task& t : plan.graph.tasks()) {
    const std::string name = t.name.str();
    if (name.find("embedding") != std::string::npos) {
      EXPECT_EQ(t.rank, 0) << name;
    }
    if (name.find("layer1/") != std::string::npos) ++layer1_on[t.rank];
  }
  EXPECT_EQ(layer1_on[0], 0);
  EXPECT_GT(layer1_on[1], 0);
}

TEST(PipelineLowering, EachStageRunsItsOwnWorkload) {
  TwoStages f;
  const Workload w = f.StageWorkload(Recompute::kNone);
  const int n = static_cast<int>(w.layers.size());
  const std::vector<int> bounds{0, n / 2, n};
  const Plan plain = PipelineLowering(f.s, f.o, w, {}, bounds).Lower();
  const Plan recomputed =
      PipelineLowering(f.s, f.o, w,
                       {f.StageWorkload(Recompute::kFull), f.StageWorkload(Recompute::kNone)},
                       bounds)
          .Lower();
  const std::vector<double> a = FlopsPerRank(plain), b = FlopsPerRank(recomputed);
  EXPECT_GT(b[0], a[0]);  // stage 0 re-runs its forwards in the backward
  EXPECT_DOUBLE_EQ(b[1], a[1]);
}

}  // namespace
}  // namespace stratasim
