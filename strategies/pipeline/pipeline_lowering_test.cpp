#include "strategies/pipeline/pipeline_lowering.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "strategies/pipeline/stage_workload.h"
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

// What lowering raises as an Error, or "no error".
std::string LowerError(PipelineLowering& lowering) {
  try {
    lowering.Lower();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(PipelineLowering, ExplicitRanksPlaceTheStages) {
  // Two stages x two replicas on 4 GPUs; stage 0 of replica 0 on GPU 3, its stage 1 on GPU 1.
  TwoStages f;
  f.s = testing::TinyGptScenario({4, 1, 4, 1, 4, 4});
  f.o.d = 2;
  const Workload w = f.StageWorkload(Recompute::kNone);
  const int n = static_cast<int>(w.layers.size());
  const std::vector<int> bounds{0, n / 2, n};
  f.o.ranks = {3, 1, 2, 0};
  const Plan plan = PipelineLowering(f.s, f.o, w, {}, bounds).Lower();
  plan.graph.Validate();
  EXPECT_EQ(plan.rank_stage, (std::vector<int>{1, 1, 0, 0}));
  for (const Task& t : plan.graph.tasks()) {
    if (t.name.str().find("embedding") != std::string::npos) {
      EXPECT_TRUE(t.rank == 3 || t.rank == 2) << t.name.str();
    }
  }
  // The mapping of order dpt written out: the same FLOPs on the same ranks as the order.
  PipelineShape by_order = f.o;
  by_order.ranks.clear();
  by_order.order = "dpt";
  const ParallelLayout dpt{1, 2, 2, "dpt"};
  f.o.ranks.clear();
  for (int q = 0; q < 2; ++q) {
    for (int st = 0; st < 2; ++st) f.o.ranks.push_back(dpt.Rank(q, st, 0));
  }
  const Plan a = PipelineLowering(f.s, by_order, w, {}, bounds).Lower();
  const Plan b = PipelineLowering(f.s, f.o, w, {}, bounds).Lower();
  EXPECT_EQ(a.rank_stage, b.rank_stage);
  EXPECT_EQ(FlopsPerRank(a), FlopsPerRank(b));
  EXPECT_EQ(a.graph.tasks().size(), b.graph.tasks().size());
}

TEST(PipelineLowering, BadExplicitRanksAreErrors) {
  TwoStages f;
  const Workload w = f.StageWorkload(Recompute::kNone);
  const int n = static_cast<int>(w.layers.size());
  f.o.ranks = {1, 1};
  PipelineLowering twice(f.s, f.o, w, {}, {0, 2, n});
  EXPECT_EQ(LowerError(twice),
            "explicit rank mapping: rank 1 appears twice (again at position 1): not a "
            "permutation of the GPUs");
  f.o.ranks = {0};
  PipelineLowering short_map(f.s, f.o, w, {}, {0, 2, n});
  EXPECT_EQ(LowerError(short_map),
            "explicit rank mapping: 1 ranks for tensor (1) x stages (2) x data (1) = 2 positions "
            "on 2 GPUs");
}

TEST(PipelineLowering, MicroBatchesOfDifferentSizes) {
  TwoStages f;
  const Workload one = f.StageWorkload(Recompute::kNone);
  StageWorkloadChoice two;
  two.micro_batch = 2;
  const Workload w2 = PipelineStageWorkload(f.s, f.o, two);
  const int n = static_cast<int>(one.layers.size());
  const std::vector<int> bounds{0, n / 2, n};
  f.o.m = 4;
  const Plan even = PipelineLowering(f.s, f.o, one, {}, bounds).Lower();
  f.o.micro_batch_sizes = {1, 1, 2};
  PipelineLowering lowering(f.s, f.o, one, {}, bounds);
  lowering.SetMicroBatchWorkloads({{2, w2, {}}});
  const Plan sliced = lowering.Lower();
  sliced.graph.Validate();
  EXPECT_EQ(sliced.samples_per_iteration, 4);
  const std::vector<double> a = FlopsPerRank(even), b = FlopsPerRank(sliced);
  for (int r = 0; r < 2; ++r) EXPECT_NEAR(b[r], a[r], 1e-9 * a[r]);
  // Micro-batch 2 sends twice the activation bytes of micro-batch 0 and allocates twice the
  // activation memory.
  double sent[3] = {0, 0, 0}, held[3] = {0, 0, 0};
  for (const Task& t : sliced.graph.tasks()) {
    const std::string name = t.name.str();
    for (int mb = 0; mb < 3; ++mb) {
      if (name.find("/mb" + std::to_string(mb) + "/") == std::string::npos) continue;
      if (t.kind == TaskKind::kSend && name.find("send_activation") != std::string::npos) {
        sent[mb] += t.bytes;
      }
      if (t.kind == TaskKind::kMemory && t.memory_delta_bytes > 0) {
        held[mb] += t.memory_delta_bytes;
      }
    }
  }
  EXPECT_GT(sent[0], 0);
  EXPECT_DOUBLE_EQ(sent[1], sent[0]);
  EXPECT_DOUBLE_EQ(sent[2], 2 * sent[0]);
  EXPECT_GT(held[0], 0);
  EXPECT_NEAR(held[2], 2 * held[0], 1e-9 * held[2]);
}

TEST(PipelineLowering, BadMicroBatchSizesAreErrors) {
  TwoStages f;
  const Workload w = f.StageWorkload(Recompute::kNone);
  const int n = static_cast<int>(w.layers.size());
  f.o.micro_batch_sizes = {2, 1};
  PipelineLowering missing(f.s, f.o, w, {}, {0, 2, n});
  EXPECT_EQ(LowerError(missing),
            "micro_batch_sizes (2,1): no workload for micro-batches of 2 sample(s) "
            "(PipelineLowering::SetMicroBatchWorkloads)");
  f.o.micro_batch_sizes = {1, 0};
  PipelineLowering empty(f.s, f.o, w, {}, {0, 2, n});
  EXPECT_EQ(LowerError(empty), "micro_batch_sizes (1,0): micro-batch 1 has no samples");
  f.o.micro_batch_sizes = {1, 1};
  f.o.schedule = "pipedream_2bw";
  PipelineLowering two_bw(f.s, f.o, w, {}, {0, 2, n});
  EXPECT_EQ(LowerError(two_bw),
            "micro_batch_sizes (1,1) needs schedule gpipe or 1f1b, not pipedream_2bw");
  f.o.schedule = "interleaved";
  f.o.v = 2;
  PipelineLowering interleaved(f.s, f.o, w, {}, {0, 1, 2, 3, n});
  EXPECT_EQ(LowerError(interleaved),
            "micro_batch_sizes (1,1) needs schedule gpipe or 1f1b, not interleaved");
  f.o.schedule = "1f1b";
  f.o.v = 1;
  PipelineLowering lowering(f.s, f.o, w, {}, {0, 2, n});
  try {
    lowering.SetMicroBatchWorkloads({{2, Workload{}, {}}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "micro-batch workload of 2 sample(s) has 0 layers, not " +
                                         std::to_string(n) + " as the pipeline's");
  }
  try {
    lowering.SetMicroBatchWorkloads({{2, w, {w, w}}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "micro-batch workload of 2 sample(s) has 2 per-stage workloads, not 0 as the "
              "pipeline's");
  }
}

}  // namespace
}  // namespace stratasim
