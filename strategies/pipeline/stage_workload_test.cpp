#include "strategies/pipeline/stage_workload.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "models/sub_layers.h"
#include "strategies/tensor/megatron.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

PipelineShape Shape(int t, bool sp) {
  PipelineShape o;
  o.p = 2;
  o.t = t;
  o.sp = sp;
  o.m = 2;
  o.schedule = "1f1b";
  o.order = "tpd";
  return o;
}

double Flops(const Workload& w) { return w.ForwardFlops() + w.BackwardFlops(); }

TEST(PipelineStageWorkload, DefaultIsTheModelsWorkload) {
  Scenario s = testing::TinyGptScenario({});
  s.model.recompute = Recompute::kFull;
  const Workload w = PipelineStageWorkload(s, Shape(1, false));
  const Workload built = BuildWorkload(s.model, 1, DType::kBF16);
  EXPECT_EQ(w.layers.size(), built.layers.size());
  EXPECT_DOUBLE_EQ(w.RecomputeFlops(), built.RecomputeFlops());
  EXPECT_DOUBLE_EQ(w.ActivationBytes(), built.ActivationBytes());
  // Twice the samples: twice the FLOPs.
  StageWorkloadChoice two;
  two.micro_batch = 2;
  EXPECT_NEAR(Flops(PipelineStageWorkload(s, Shape(1, false), two)), 2 * Flops(w), 1e-9 * Flops(w));
}

TEST(PipelineStageWorkload, ShardingTheHalvesEqualsSplittingTheShard) {
  for (bool sp : {false, true}) {
    Scenario s = testing::TinyGptScenario({});
    StageWorkloadChoice halves;
    halves.sub_layers = true;
    const Workload split = PipelineStageWorkload(s, Shape(2, sp), halves);  // split, then shard
    const Workload sharded = SplitSubLayers(PipelineStageWorkload(s, Shape(2, sp)));
    ASSERT_EQ(split.layers.size(), sharded.layers.size());
    EXPECT_NEAR(Flops(split), Flops(sharded), 1e-12 * Flops(split));
    EXPECT_NEAR(split.params, sharded.params, 1e-12 * split.params);
    EXPECT_NEAR(split.ActivationBytes(), sharded.ActivationBytes(),
                1e-12 * split.ActivationBytes());
    for (size_t i = 0; i < split.layers.size(); ++i) {
      const LayerCost &a = split.layers[i], &b = sharded.layers[i];
      EXPECT_EQ(a.name, b.name);
      EXPECT_NEAR(a.params, b.params, 1e-12 * b.params) << a.name;
      EXPECT_DOUBLE_EQ(a.input_bytes, b.input_bytes) << a.name;
      const double fa = a.ForwardFlops() + a.BackwardFlops();
      const double fb = b.ForwardFlops() + b.BackwardFlops();
      EXPECT_NEAR(fa, fb, 1e-9 * fb) << a.name;
    }
    // And the halves add up to the unsplit shard.
    const Workload whole = PipelineStageWorkload(s, Shape(2, sp));
    EXPECT_NEAR(Flops(split), Flops(whole), 1e-12 * Flops(whole));
    EXPECT_NEAR(split.params, whole.params, 1e-12 * whole.params);
    EXPECT_NEAR(split.ActivationBytes(), whole.ActivationBytes(), 1e-12 * whole.ActivationBytes());
  }
}

TEST(PipelineStageWorkload, RecomputesTheFlaggedBlocks) {
  Scenario s = testing::TinyGptScenario({});
  s.model.recompute = Recompute::kSelective;  // overridden by the flags
  StageWorkloadChoice choice;
  choice.sub_layers = true;
  const size_t n = PipelineStageWorkload(s, Shape(1, false), choice).layers.size();
  choice.recompute_layers.assign(n, false);
  choice.recompute_layers[2] = true;  // layer0.mlp
  const Workload w = PipelineStageWorkload(s, Shape(1, false), choice);
  EXPECT_EQ(w.layers[2].name, "layer0.mlp");
  EXPECT_DOUBLE_EQ(w.RecomputeFlops(), w.layers[2].ForwardFlops());
  EXPECT_DOUBLE_EQ(w.layers[2].activation_bytes, w.layers[2].input_bytes);
  choice.recompute_layers.pop_back();
  try {
    PipelineStageWorkload(s, Shape(1, false), choice);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "ApplyRecompute: " + std::to_string(n - 1) +
                                         " per-layer choices for a workload of " +
                                         std::to_string(n) + " layers");
  }
}

}  // namespace
}  // namespace stratasim
