#include "strategies/planners/piper.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim::planners {
namespace {

// `gpus` GPUs of `memory` bytes in one server at 100 B/s, no latency.
ClusterView OneServer(int gpus, double memory = 1e12) {
  ClusterView c;
  for (int r = 0; r < gpus; ++r) c.devices.push_back({0, 0, 0, -1, memory, 1});
  c.intra_Bps = {100};
  c.nic_Bps = {10};
  return c;
}

BlockCost Block(double f, double act, double ckpt, double rec, double params = 0, double out = 0) {
  BlockCost b;
  b.forward_s = f;
  b.backward_s = 2 * f;
  b.activation_bytes = act;
  b.checkpoint_bytes = ckpt;
  b.recompute_s = rec;
  b.recomputable = true;
  b.params = params;
  b.output_bytes = out;
  return b;
}

CostProfile Profile(std::vector<BlockCost> blocks, int tensor = 1) {
  CostProfile p;
  p.kinds = {"gpu"};
  p.costs = {std::move(blocks)};
  p.tensor = tensor;
  return p;
}

TEST(Piper, KnapsackRecomputesTheCheapestBlocksThatMakeTheStageFit) {
  // "Attention" blocks save 90 B per micro-batch for 1 s, "MLP" blocks 50 B for 3 s; two
  // micro-batches in flight: 640 B without recomputation.
  const CostProfile p = Profile(
      {Block(1, 100, 10, 1), Block(1, 60, 10, 3), Block(1, 100, 10, 1), Block(1, 60, 10, 3)});
  PiperStage st = PiperKnapsack(p, 0, 0, 4, 2, 640);
  EXPECT_TRUE(st.fits);
  EXPECT_EQ(st.recompute, (std::vector<bool>{false, false, false, false}));
  EXPECT_DOUBLE_EQ(st.seconds, 12);
  // 500 B: both attention blocks (640 - 360 + 100 re-created = 380 B, 2 s) rather than both
  // MLP blocks (500 B, 6 s) or one of each (460 B, 4 s).
  st = PiperKnapsack(p, 0, 0, 4, 2, 500);
  EXPECT_TRUE(st.fits);
  EXPECT_EQ(st.recompute, (std::vector<bool>{true, false, true, false}));
  EXPECT_DOUBLE_EQ(st.seconds, 14);
  EXPECT_DOUBLE_EQ(st.memory_bytes, 380);
  // 200 B: all four (180 B).
  st = PiperKnapsack(p, 0, 0, 4, 2, 200);
  EXPECT_TRUE(st.fits);
  EXPECT_EQ(st.recompute, (std::vector<bool>{true, true, true, true}));
  EXPECT_DOUBLE_EQ(st.memory_bytes, 180);
  // 150 B: nothing fits.
  EXPECT_FALSE(PiperKnapsack(p, 0, 0, 4, 2, 150).fits);
}

PiperInput Input(CostProfile p, ClusterView c, int global_micro_batches) {
  PiperInput in;
  in.profiles = {std::move(p)};
  in.cluster = std::move(c);
  in.global_micro_batches = global_micro_batches;
  return in;
}

TEST(Piper, SwitchesToRecomputationWhenMemoryIsTightAndNeverPicksAPlanThatDoesNotFit) {
  // 4 equal blocks on 2 GPUs (2 stages, 4 micro-batches): stage 0 keeps 2 in flight.
  const CostProfile p = Profile(std::vector<BlockCost>(4, Block(1, 100, 10, 1)));
  PiperInput in = Input(p, OneServer(2), 4);
  PlannedPipeline plan = PlanPiper(in);
  EXPECT_EQ(plan.bounds, (std::vector<int>{0, 2, 4}));
  EXPECT_TRUE(plan.recompute.empty());
  // 300 B: 2 | 2 with stage 0's two blocks recomputed (8 s per sample) beats 1 | 3 (9 s).
  in.cluster = OneServer(2, 300);
  plan = PlanPiper(in);
  EXPECT_EQ(plan.bounds, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(plan.recompute, (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(plan.stage_seconds, (std::vector<double>{8, 6}));
  // 130 B: only 1 | 3 with every block recomputed fits.
  in.cluster = OneServer(2, 130);
  plan = PlanPiper(in);
  EXPECT_EQ(plan.bounds, (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(plan.recompute, (std::vector<bool>{true, true, true, true}));
  // Whatever the memory, each stage of the plan fits it with its S - s micro-batches.
  for (double memory : {1e12, 400.0, 300.0, 250.0, 200.0, 160.0, 130.0}) {
    in.cluster = OneServer(2, memory);
    plan = PlanPiper(in);
    for (int s = 0; s < plan.stages; ++s) {
      EXPECT_LE(StageMemoryBytes(p, 0, plan.bounds[s], plan.bounds[s + 1], plan.stages - s,
                                 plan.recompute),
                memory)
          << "stage " << s << " at " << memory << " B";
    }
  }
  // 100 B: stage 0 cannot hold even one recomputed block with two in flight.
  in.cluster = OneServer(2, 100);
  try {
    PlanPiper(in);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "piper: no plan fits in memory (t1 d1 S2: does not fit)");
  }
}

TEST(Piper, ObjectiveIsTheSlowestStageTimePerSampleWithBoundaryAndAllReduceTerms) {
  // 4 GPUs; 4 blocks of 3 s per micro-batch of one sample, 100 parameters (200 B of gradients)
  // and a 100 B boundary each (1 s at 100 B/s).
  const CostProfile p = Profile(std::vector<BlockCost>(4, Block(1, 1, 1, 1, 100, 100)));
  const PlannedPipeline plan = PlanPiper(Input(p, OneServer(4), 4));
  // d = 1, 4 stages: an inner stage takes 3 + 2 x 2 boundaries = 7 s per sample. d = 2, 2
  // stages: (6 + 2 x 1) / 2 + 4 (2 - 1) x 400 B / (2 x 4 samples) / 100 B/s = 4 + 2 = 6.
  EXPECT_EQ(plan.data, 2);
  EXPECT_EQ(plan.stages, 2);
  EXPECT_DOUBLE_EQ(plan.predicted_seconds, 6 * 4);
  EXPECT_EQ(plan.schedule, "1f1b");
  EXPECT_NE(plan.notes[1].find("t1 d1 S4: 7000.0000 ms/sample"), std::string::npos)
      << plan.notes[1];
}

TEST(Piper, TriesEveryTensorAndDataDegree) {
  // Tensor 2 runs each block in 1.2 s instead of 3 s: t2 d1 S2 (2.4 s per sample) beats t1 d1
  // S4 and t1 d2 S2 (3 s).
  PiperInput in = Input(Profile(std::vector<BlockCost>(4, Block(1, 1, 1, 1))), OneServer(4), 4);
  in.profiles.push_back(Profile(std::vector<BlockCost>(4, Block(0.4, 1, 1, 1)), 2));
  const PlannedPipeline plan = PlanPiper(in);
  EXPECT_EQ(plan.tensor, 2);
  EXPECT_EQ(plan.data, 1);
  EXPECT_EQ(plan.stages, 2);
  EXPECT_NEAR(plan.predicted_seconds, 2.4 * 4, 1e-9);
}

}  // namespace
}  // namespace stratasim::planners
