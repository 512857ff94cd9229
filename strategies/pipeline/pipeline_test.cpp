#include "strategies/pipeline/pipeline.h"

#include <gtest/gtest.h>

#include <set>

#include "core/metrics.h"
#include "models/workload.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

// A GPT of `layers` layers on `gpus` GPUs of one NVSwitch server (as strategies/data/ddp_test).
Scenario Small(int gpus, int layers, int global_batch, int micro_batch) {
  return testing::TinyGptScenario({gpus, 1, global_batch, micro_batch, layers, 4});
}

StrategySpec Spec(std::map<std::string, std::string> options) {
  return testing::SpecOf("pp", "pipeline", options);
}

std::string ErrorOf(const Scenario& s, const StrategySpec& spec) {
  return testing::PlanErrorOf(s, spec);
}

TEST(PipelineSchedule, OneFOneBOnFourStagesWithEightMicroBatches) {
  // PipeDream-Flush (Narayanan et al. 2021, Fig. 4): p - s - 1 warm-up forwards.
  EXPECT_EQ(ScheduleString(PipelineSchedule("1f1b", 4, 0, 8, 1)),
            "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(ScheduleString(PipelineSchedule("1f1b", 4, 2, 8, 1)),
            "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7");
  EXPECT_EQ(ScheduleString(PipelineSchedule("1f1b", 4, 3, 8, 1)),
            "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
  EXPECT_EQ(ScheduleString(PipelineSchedule("gpipe", 4, 1, 3, 1)), "F0 F1 F2 B2 B1 B0");
}

TEST(PipelineSchedule, InterleavedFollowsMegatron) {
  // Megatron-LM's forward_backward_pipelining_with_interleaving, p = 2, v = 2, m = 4: stage 0
  // warms up with (p - 1) 2 + (v - 1) p = 4 forwards, stage 1 with 2.
  EXPECT_EQ(ScheduleString(PipelineSchedule("interleaved", 2, 0, 4, 2)),
            "F0 F1 F0c1 F1c1 F2 B0c1 F3 B1c1 F2c1 B0 F3c1 B1 B2c1 B3c1 B2 B3");
  EXPECT_EQ(ScheduleString(PipelineSchedule("interleaved", 2, 1, 4, 2)),
            "F0 F1 F0c1 B0c1 F1c1 B1c1 F2 B0 F3 B1 F2c1 B2c1 F3c1 B3c1 B2 B3");
  // m == p: all forwards first.
  EXPECT_EQ(ScheduleString(PipelineSchedule("interleaved", 2, 1, 2, 2)),
            "F0 F1 F0c1 F1c1 B0c1 B1c1 B0 B1");
}

TEST(PipelineSchedule, EvenPartitionBalancesForwardFlops) {
  const Workload w = BuildWorkload(Small(4, 8, 8, 1).model, 1, DType::kBF16);
  const std::vector<int> b = EvenPartition(w, 4);
  ASSERT_EQ(b.size(), 5u);
  EXPECT_EQ(b.front(), 0);
  EXPECT_EQ(b.back(), static_cast<int>(w.layers.size()));
  double most = 0, total = w.ForwardFlops();
  for (int k = 0; k < 4; ++k) {
    double f = 0;
    for (int i = b[k]; i < b[k + 1]; ++i) f += w.layers[i].ForwardFlops();
    most = std::max(most, f);
  }
  EXPECT_LT(most, 0.4 * total);
}

// Chunk c of an interleaved pipeline runs on stage c mod p, so what must balance is each
// stage's sum of chunks; a chunk-wise min-max split can leave the head alone in the last chunk
// and overload the first stage.
TEST(PipelineSchedule, InterleavedPartitionBalancesTheStagesSums) {
  Scenario s = Small(4, 16, 8, 1);
  s.model.vocabulary = 4000;  // the head weighs about one transformer layer
  const Workload w = BuildWorkload(s.model, 1, DType::kBF16);
  const int p = 2, v = 2;
  auto largest_stage = [&](const std::vector<int>& b) {
    std::vector<double> stage(p, 0);
    for (int j = 0; j < p * v; ++j) {
      for (int i = b[j]; i < b[j + 1]; ++i) stage[j % p] += w.layers[i].ForwardFlops();
    }
    return std::max(stage[0], stage[1]);
  };
  const std::vector<int> b = EvenInterleavedPartition(w, p, v);
  ASSERT_EQ(b.size(), 5u);
  for (int j = 0; j < p * v; ++j) EXPECT_LT(b[j], b[j + 1]);
  EXPECT_EQ(b.back(), static_cast<int>(w.layers.size()));
  EXPECT_LE(largest_stage(b), largest_stage(EvenPartition(w, p * v)));
  // Within one layer of the ideal half.
  EXPECT_LT(largest_stage(b), w.ForwardFlops() / p + w.layers[1].ForwardFlops());
}

TEST(Pipeline, PartitionErrorsNameTheNumbers) {
  const Scenario s = Small(2, 4, 8, 1);
  const std::string sum = ErrorOf(s, Spec({{"stages", "2"}, {"partition", "3,3"}}));
  EXPECT_NE(sum.find("sum to 6 but the model has 4 layers"), std::string::npos) << sum;
  const std::string count = ErrorOf(s, Spec({{"stages", "2"}, {"partition", "2,1,1"}}));
  EXPECT_NE(count.find("gives 3 layer counts but the pipeline has 2 stages"), std::string::npos)
      << count;
  const std::string bad = ErrorOf(s, Spec({{"stages", "2"}, {"partition", "2,x"}}));
  EXPECT_NE(bad.find("comma-separated layer counts"), std::string::npos) << bad;
  EXPECT_EQ(ErrorOf(s, Spec({{"stages", "2"}, {"partition", "1,3"}})), "no error");
}

TEST(Pipeline, MicroBatchesMustDivideAndOptionsAreChecked) {
  // 4 GPUs, 2 stages: 2 replicas; 10 samples do not split into micro-batches of 2 per replica.
  const std::string e = ErrorOf(Small(4, 4, 10, 2), Spec({{"stages", "2"}}));
  EXPECT_NE(e.find("10 / (2 x 2) is not an integer"), std::string::npos) << e;
  EXPECT_NE(ErrorOf(Small(4, 4, 8, 1), Spec({})).find("stages"), std::string::npos);
  EXPECT_NE(ErrorOf(Small(4, 4, 8, 1), Spec({{"stages", "3"}})).find("divide the GPU count (4)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Small(2, 4, 8, 1), Spec({{"stages", "2"}, {"virtual_stages", "2"}}))
                .find("only applies to schedule interleaved"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Small(2, 4, 5, 1), Spec({{"stages", "2"}, {"schedule", "interleaved"}}))
                .find("micro_batches (5) to be a multiple of stages (2)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Small(2, 4, 8, 1), Spec({{"stages", "2"}, {"stage", "2"}})).find("stage"),
            std::string::npos);
}

// Replays the graph one task per time step in graph order (as strategies/data/ddp_test): each
// rank's compute stream then sees its memory events in schedule order.
ExecutionTrace SequentialTrace(const TaskGraph& g) {
  ExecutionTrace t;
  t.num_ranks = g.num_ranks();
  for (const Task& task : g.tasks()) {
    const double at = task.id;
    t.records.push_back(TraceRecord{task.id, task.rank, task.stream, at, at + 1, at});
  }
  return t;
}

double PeakActivations(const Plan& plan, int rank) {
  MetricsInput in;
  in.measured_iterations = 1;
  const Metrics m = ComputeMetrics(plan.graph, SequentialTrace(plan.graph), in);
  return m.peak_memory_breakdown[rank].at("activations");
}

TEST(Pipeline, GpipeHoldsAllMicroBatchesAndOneFOneBHoldsP) {
  const int p = 4;
  const Workload w = BuildWorkload(Small(p, 8, 8, 1).model, 1, DType::kBF16);
  const std::vector<int> b = EvenPartition(w, p);
  double stage0 = 0;  // activations of one micro-batch on stage 0
  for (int i = b[0]; i < b[1]; ++i) stage0 += w.layers[i].activation_bytes;
  for (int m : {4, 8, 16}) {
    const Scenario s = Small(p, 8, m, 1);
    const Plan gpipe = PlanPipeline(s, Spec({{"stages", "4"}}));
    const Plan ofob = PlanPipeline(s, Spec({{"stages", "4"}, {"schedule", "1f1b"}}));
    gpipe.graph.Validate();
    ofob.graph.Validate();
    EXPECT_NEAR(PeakActivations(gpipe, 0), m * stage0, 1e-6 * m * stage0) << m;
    EXPECT_NEAR(PeakActivations(ofob, 0), p * stage0, 1e-6 * p * stage0) << m;
  }
}

TEST(Pipeline, ComputesTheWholeModelOncePerMicroBatchAndSendsBoundaries) {
  const Scenario s = Small(4, 8, 16, 2);  // 2 stages x 2 replicas, m = 4
  for (const std::string sched : {"gpipe", "1f1b", "interleaved", "pipedream_2bw"}) {
    const Plan plan = PlanPipeline(s, Spec({{"stages", "2"}, {"schedule", sched}}));
    plan.graph.Validate();
    const Workload w = BuildWorkload(s.model, 2, DType::kBF16);
    double flops = 0;
    int sends = 0;
    for (const Task& t : plan.graph.tasks()) {
      if (t.phase == Phase::kForward || t.phase == Phase::kBackward) flops += t.flops;
      if (t.kind == TaskKind::kSend) {
        ++sends;
        EXPECT_DOUBLE_EQ(t.bytes, 2.0 * 128 * 256 * 2) << sched;  // b s h x BF16
      }
    }
    EXPECT_NEAR(flops, 2 * 4 * (w.ForwardFlops() + w.BackwardFlops()), 1e-9 * flops) << sched;
    const int v = sched == "interleaved" ? 2 : 1;
    // Per replica and micro-batch: (p v - 1) boundaries, each crossed forward and backward.
    EXPECT_EQ(sends, 2 * 4 * (2 * v - 1) * 2) << sched;
    // One gradient all-reduce per chunk per iteration (the tiny model fits one bucket), over
    // the stage's replicas (r p + s), overlapped with the last backwards.
    ASSERT_EQ(plan.graph.collectives().size(), 2u * v) << sched;
    std::set<std::vector<int>> groups;
    for (const Collective& c : plan.graph.collectives()) groups.insert(c.ranks);
    EXPECT_EQ(groups, (std::set<std::vector<int>>{{0, 2}, {1, 3}})) << sched;
    EXPECT_EQ(plan.samples_per_iteration, 16);
  }
}

TEST(Pipeline, ExplicitPartitionPutsEmbeddingAndHeadAtTheEnds) {
  const Scenario s = Small(2, 4, 4, 1);
  const Plan plan = PlanPipeline(s, Spec({{"stages", "2"}, {"partition", "1,3"}}));
  for (const Task& t : plan.graph.tasks()) {
    if (t.kind != TaskKind::kCompute || t.phase != Phase::kForward) continue;
    const bool first = t.name.str().find("embedding") != std::string::npos ||
                       t.name.str().find("layer0/") != std::string::npos;
    EXPECT_EQ(t.rank, first ? 0 : 1) << t.name;
  }
}

TEST(Pipeline, PipeDream2BWKeepsTwoWeightVersionsAndNoFlush) {
  Scenario s = Small(2, 4, 4, 1);
  s.training.measured_iterations = 2;
  const Plan plan = PlanPipeline(s, Spec({{"stages", "2"}, {"schedule", "pipedream_2bw"}}));
  plan.graph.Validate();
  double weights = 0;
  for (const Task& t : plan.graph.tasks()) {
    if (t.rank == 0 && t.kind == TaskKind::kMemory && t.category == "weights") {
      weights += t.memory_delta_bytes;
    }
  }
  const Workload w = BuildWorkload(s.model, 1, DType::kBF16);
  const std::vector<int> b = EvenPartition(w, 2);
  double params = 0;
  for (int i = b[0]; i < b[1]; ++i) params += w.layers[i].params;
  EXPECT_DOUBLE_EQ(weights, 2 * 2 * params);  // two BF16 copies
  // No flush: on the last stage, iteration 1's first forward comes before iteration 0's step.
  TaskId step0 = -1, fwd1 = -1;
  for (const Task& t : plan.graph.tasks()) {
    if (t.rank != 0) continue;
    if (t.name == "it0/adam") step0 = t.id;
    if (fwd1 < 0 && t.name.str().rfind("it1/", 0) == 0 && t.phase == Phase::kForward) fwd1 = t.id;
  }
  ASSERT_GE(step0, 0);
  ASSERT_GE(fwd1, 0);
  EXPECT_LT(fwd1, step0);
}

}  // namespace
}  // namespace stratasim
