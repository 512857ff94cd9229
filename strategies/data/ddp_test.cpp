#include "strategies/data/ddp.h"

#include <gtest/gtest.h>

#include "core/metrics.h"
#include "core/model_presets.h"
#include "models/gpt.h"
#include "models/memory.h"
#include "models/workload.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

Scenario Small(int gpus, int global_batch, int micro_batch) {
  return testing::TinyGptScenario({gpus, 1, global_batch, micro_batch, 4, 4});
}

StrategySpec Spec(std::map<std::string, std::string> options) {
  return testing::SpecOf("ddp", "ddp", options);
}

TEST(Ddp, AllReducesEveryGradientOnceOverAllRanks) {
  const Scenario s = Small(4, 16, 2);
  const Plan p = PlanDdp(s, Spec({{"bucket_size", "1MB"}}));
  double bytes = 0;
  for (const Collective& c : p.graph.collectives()) {
    EXPECT_EQ(c.kind, CollectiveKind::kAllReduce);
    EXPECT_EQ(c.ranks.size(), 4u);
    bytes += c.bytes;
  }
  EXPECT_NEAR(bytes, GptParameterCount(s.model) * 2, 1);  // BF16 gradients
  EXPECT_GT(p.graph.collectives().size(), 1u);
  EXPECT_EQ(p.samples_per_iteration, 16);
}

TEST(Ddp, GradientAccumulationRunsMicroBatchesAndCommunicatesOnce) {
  Scenario s = Small(2, 16, 2);             // 4 micro-batches per GPU
  s.model.attention = Attention::kUnfused;  // its kernels run the formula's FLOPs
  const Plan one = PlanDdp(s, Spec({{"bucket_size", "1GB"}}));
  EXPECT_EQ(one.graph.collectives().size(), 1u);
  double fwd_bwd = 0;
  for (const Task& t : one.graph.tasks()) {
    if (t.rank == 0 && (t.phase == Phase::kForward || t.phase == Phase::kBackward)) {
      fwd_bwd += t.flops;
    }
  }
  EXPECT_NEAR(fwd_bwd, GptTrainingFlops(s.model, 8), 1e-9 * fwd_bwd);
}

TEST(Ddp, OverlapMakesBucketsDependOnTheirLayersBackward) {
  const Scenario s = Small(2, 4, 2);
  const Plan on = PlanDdp(s, Spec({{"bucket_size", "1MB"}, {"overlap", "true"}}));
  const Plan off = PlanDdp(s, Spec({{"bucket_size", "1MB"}, {"overlap", "false"}}));
  const Task& first_on = on.graph.task(on.graph.collectives()[0].members[0]);
  const Task& first_off = off.graph.task(off.graph.collectives()[0].members[0]);
  // With overlap the first bucket (head + last layer, over 1 MB) waits for the last layer's
  // backward; without, for the end of the backward pass (the embedding's).
  EXPECT_NE(on.graph.task(first_on.deps[0]).name.str().find("layer3/"), std::string::npos);
  EXPECT_NE(off.graph.task(first_off.deps[0]).name.str().find("embedding"), std::string::npos);
}

TEST(Ddp, BatchThatDoesNotSplitIsAnError) {
  try {
    PlanDdp(Small(4, 10, 2), Spec({}));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("global_batch (10)"), std::string::npos) << e.what();
  }
}

TEST(Ddp, BadOptionsAreErrors) {
  EXPECT_THROW(PlanDdp(Small(2, 4, 2), Spec({{"bucket_size", "-1MB"}})), ConfigError);
  EXPECT_THROW(PlanDdp(Small(2, 4, 2), Spec({{"overlap", "maybe"}})), ConfigError);
  try {
    PlanDdp(Small(2, 4, 2), Spec({{"bucket", "1MB"}}));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "strategies[0].options.bucket");
    EXPECT_EQ(e.where().line, 9);
  }
}

// Replays the graph with one task per time step in graph order: each rank's streams are
// sequential there, so memory events are seen in the order a rank issues them.
ExecutionTrace SequentialTrace(const TaskGraph& g) {
  ExecutionTrace t;
  t.num_ranks = g.num_ranks();
  for (const Task& task : g.tasks()) {
    const double at = task.id;
    t.records.push_back(TraceRecord{task.id, task.rank, task.stream, at, at + 1, at});
  }
  return t;
}

TEST(Ddp, RunsACnnThroughTheGenericWorkload) {
  Scenario s = Small(2, 64, 32);
  s.model = *FindModelPreset("resnet50");
  const Plan p = PlanDdp(s, Spec({{"bucket_size", "25MB"}}));
  EXPECT_EQ(p.tokens_per_sample, 0);  // images, not tokens
  double bytes = 0, fwd_bwd = 0;
  for (const Collective& c : p.graph.collectives()) bytes += c.bytes;
  EXPECT_NEAR(bytes, 25557032.0 * 2, 1);  // BF16 gradients of ResNet-50
  for (const Task& t : p.graph.tasks()) {
    if (t.rank == 0 && (t.phase == Phase::kForward || t.phase == Phase::kBackward)) {
      fwd_bwd += t.flops;
    }
  }
  const Workload w = BuildWorkload(s.model, 32, DType::kBF16);
  EXPECT_NEAR(fwd_bwd, w.ForwardFlops() + w.BackwardFlops(), 1e-9 * fwd_bwd);
  EXPECT_NEAR(w.ForwardFlops() / 32 / 2, 4.09e9, 0.02e9);
}

TEST(Ddp, FlashAttentionKeepsTheModelFlopsOfTheMegatronFormula) {
  // The fused causal kernels run fewer FLOPs than the formula counts, but MFU's model FLOPs
  // (and HFU's, with full recomputation) are the formula's.
  Scenario s = Small(1, 2, 2);
  s.model.recompute = Recompute::kFull;
  ASSERT_EQ(s.model.attention, Attention::kFlash);
  const Plan p = PlanDdp(s, Spec({}));
  double run = 0;
  int fused = 0;
  for (const Task& t : p.graph.tasks()) {
    if (t.phase == Phase::kForward || t.phase == Phase::kBackward) run += t.flops;
    if (t.op == OpKind::kFusedAttention) {
      ++fused;
      EXPECT_TRUE(t.causal) << t.name.str();
    }
  }
  EXPECT_EQ(fused, 3 * s.model.layers);  // forward, recompute, backward
  EXPECT_LT(run, GptTrainingFlops(s.model, 2));
  MetricsInput in;
  in.measured_iterations = 1;
  in.peak_flops_per_rank = {1};
  const Metrics m = ComputeMetrics(p.graph, SequentialTrace(p.graph), in);
  const double model = GptTrainingFlops(s.model, 2);
  EXPECT_NEAR(m.model_flops_per_iteration, model, 1e-9 * model);
  EXPECT_NEAR(m.hfu / m.mfu, GptTrainingFlops(s.model, 2, Recompute::kFull) / model, 1e-9);
}

TEST(Ddp, RecomputationAddsRecomputeTasksAndLowersThePeak) {
  Scenario s = Small(1, 2, 2);
  s.model.attention = Attention::kUnfused;  // its kernels run the formula's FLOPs
  const Plan plain = PlanDdp(s, Spec({}));
  s.model.recompute = Recompute::kFull;
  const Plan full = PlanDdp(s, Spec({}));
  double recompute = 0, model = 0;
  for (const Task& t : full.graph.tasks()) {
    if (t.phase == Phase::kRecompute) recompute += t.flops;
    if (t.phase == Phase::kForward || t.phase == Phase::kBackward) model += t.flops;
  }
  EXPECT_NEAR(recompute + model, GptTrainingFlops(s.model, 2, Recompute::kFull), 1e-9 * model);
  EXPECT_NEAR(model, GptTrainingFlops(s.model, 2), 1e-9 * model);

  MetricsInput in;
  in.measured_iterations = 1;
  const Metrics a = ComputeMetrics(plain.graph, SequentialTrace(plain.graph), in);
  const Metrics b = ComputeMetrics(full.graph, SequentialTrace(full.graph), in);
  EXPECT_LT(b.peak_memory_bytes[0], a.peak_memory_bytes[0]);
  // At most: every layer's kept input plus the head, and one layer re-created at a time.
  const Workload w = BuildWorkload(s.model, 2, DType::kBF16);
  EXPECT_LE(b.peak_memory_breakdown[0].at("activations"), PeakActivationBytes(w, 1));
  EXPECT_LT(b.peak_memory_breakdown[0].at("activations"),
            a.peak_memory_breakdown[0].at("activations"));
}

TEST(Ddp, Gpt3With13BParametersDoesNotFitOneA100AndSaysWhy) {
  Scenario s = Small(1, 1, 1);
  s.model = *FindModelPreset("gpt3-13b");
  const Plan p = PlanDdp(s, Spec({}));
  MetricsInput in;
  in.measured_iterations = 1;
  in.memory_capacity_per_rank = {80e9};  // A100 80GB
  const Metrics m = ComputeMetrics(p.graph, SequentialTrace(p.graph), in);
  EXPECT_EQ(m.oom_ranks, (std::vector<int>{0}));
  const std::map<std::string, double>& at_peak = m.peak_memory_breakdown[0];
  // 16 bytes per parameter of model states alone exceed 80 GB (13e9 x 16 = 208 GB).
  const double params = GptParameterCount(s.model);
  EXPECT_DOUBLE_EQ(at_peak.at("weights"), 2 * params);
  EXPECT_DOUBLE_EQ(at_peak.at("gradients"), 2 * params);
  EXPECT_DOUBLE_EQ(at_peak.at("optimizer"), 12 * params);
  EXPECT_DOUBLE_EQ(at_peak.at("comm_buffers"), 2 * params);  // DDP's bucket copy
  EXPECT_GT(at_peak.at("activations"), 0);
  double sum = 0;
  for (const auto& [category, bytes] : at_peak) sum += bytes;
  EXPECT_NEAR(sum, m.peak_memory_bytes[0], 1);
  // Gradients as bucket views drop the copy.
  const Plan view = PlanDdp(s, Spec({{"gradient_as_bucket_view", "true"}}));
  const Metrics v = ComputeMetrics(view.graph, SequentialTrace(view.graph), in);
  EXPECT_EQ(v.peak_memory_breakdown[0].count("comm_buffers"), 0u);
}

}  // namespace
}  // namespace stratasim
