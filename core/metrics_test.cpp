#include "core/metrics.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim {
namespace {

// Two iterations on one rank: compute [0,1) then comm [1,1.5) in iteration 0; compute
// [1.5,2.5) overlapping comm [2,3) in iteration 1; memory +10 at 0, +5 at 1.5, -5 at 2.5.
struct Fixture {
  TaskGraph g{1};
  ExecutionTrace t;
  Fixture() {
    const int s = g.Stream("c"), c = g.Stream("m");
    auto add = [&](TaskKind k, int stream, int it, Phase ph, double flops, double mem, double start,
                   double end) {
      Task x;
      x.kind = k;
      x.stream = stream;
      x.iteration = it;
      x.phase = ph;
      x.flops = flops;
      x.memory_delta_bytes = mem;
      x.peer = 0;
      TaskId id = k == TaskKind::kCollective ? -1 : g.Add(x);
      t.records.push_back(TraceRecord{id, 0, stream, start, end, start});
    };
    add(TaskKind::kMemory, s, 0, Phase::kOther, 0, 10, 0, 0);
    add(TaskKind::kCompute, s, 0, Phase::kForward, 100, 0, 0, 1);
    add(TaskKind::kCopy, c, 0, Phase::kCommunication, 0, 0, 1, 1.5);
    add(TaskKind::kMemory, s, 1, Phase::kOther, 0, 5, 1.5, 1.5);
    add(TaskKind::kCompute, s, 1, Phase::kBackward, 200, 0, 1.5, 2.5);
    add(TaskKind::kMemory, s, 1, Phase::kOther, 0, -5, 2.5, 2.5);
    add(TaskKind::kCopy, c, 1, Phase::kCommunication, 0, 0, 2, 3);
    t.num_ranks = 1;
  }
};

// The fixture's iteration 0 is warm-up, iteration 1 measured; one rank of 1000 FLOP/s peak
// and 12 bytes of memory.
MetricsInput FixtureInput() {
  MetricsInput in;
  in.warmup_iterations = 1;
  in.measured_iterations = 1;
  in.samples_per_iteration = 8;
  in.tokens_per_sample = 10;
  in.peak_flops_per_rank = {1000};
  in.memory_capacity_per_rank = {12};
  return in;
}

TEST(Metrics, IterationTimeThroughputExposedCommAndMemory) {
  Fixture f;
  const MetricsInput in = FixtureInput();
  const Metrics m = ComputeMetrics(f.g, f.t, in);
  EXPECT_DOUBLE_EQ(m.iteration_time_s, 1.5);  // iteration 1 ends at 3, iteration 0 at 1.5
  EXPECT_DOUBLE_EQ(m.samples_per_s, 8 / 1.5);
  EXPECT_DOUBLE_EQ(m.tokens_per_s, 80 / 1.5);
  EXPECT_DOUBLE_EQ(m.model_flops_per_iteration, 200);
  EXPECT_DOUBLE_EQ(m.mfu, 200 / 1.5 / 1000);
  EXPECT_DOUBLE_EQ(m.exposed_comm_fraction, 0.5 / 1.5);  // comm alone in [2.5, 3)
  EXPECT_DOUBLE_EQ(m.peak_memory_bytes[0], 15);
  EXPECT_EQ(m.oom_ranks, (std::vector<int>{0}));
}

TEST(Metrics, WholeRunWhenNoWarmup) {
  Fixture f;
  MetricsInput in;
  in.warmup_iterations = 0;
  in.measured_iterations = 2;
  in.samples_per_iteration = 1;
  const Metrics m = ComputeMetrics(f.g, f.t, in);
  EXPECT_DOUBLE_EQ(m.iteration_time_s, 1.5);
  EXPECT_DOUBLE_EQ(m.exposed_comm_fraction, 1.0 / 3);  // [1,1.5) and [2.5,3) of 3 s
  EXPECT_DOUBLE_EQ(m.model_flops_per_iteration, 150);
}

TEST(Metrics, FusedAttentionCountsTheFullProductsAsModelFlops) {
  // One causal fused attention kernel per phase, b a = 4 sequences x heads, s = 8, d = 2: the
  // tasks carry what the kernel runs (half of 4 b a s^2 d forward; 2.5x that backward), the
  // metrics count 4 b a s^2 d forward and 8 b a s^2 d backward and recomputed.
  const double full = 4 * 4 * 8 * 8 * 2;
  TaskGraph g{1};
  ExecutionTrace t;
  t.num_ranks = 1;
  const int stream = g.Stream("c");
  double at = 0;
  for (Phase ph : {Phase::kForward, Phase::kRecompute, Phase::kBackward}) {
    Task x;
    x.stream = stream;
    x.phase = ph;
    x.op = OpKind::kFusedAttention;
    x.causal = true;
    x.gemm = GemmShape{8, 8, 2, 4};
    x.flops = (ph == Phase::kBackward ? 2.5 : 1) * full / 2;
    const TaskId id = g.Add(x);
    t.records.push_back(TraceRecord{id, 0, stream, at, at + 1, at});
    at += 1;
  }
  MetricsInput in;
  in.measured_iterations = 1;
  in.peak_flops_per_rank = {1000};
  const Metrics m = ComputeMetrics(g, t, in);
  EXPECT_DOUBLE_EQ(m.model_flops_per_iteration, full + 2 * full);
  EXPECT_DOUBLE_EQ(m.mfu, 3 * full / 3 / 1000);
  EXPECT_DOUBLE_EQ(m.hfu, 4 * full / 3 / 1000);
}

TEST(Metrics, HardwareFlopsIdleTimeAndExposedCommunicationByCategory) {
  // One rank, one iteration of 5 s: forward [0,1) 100 FLOPs, recompute [1,1.5) 50 FLOPs, a
  // "tp" transfer posted at 1.5 whose peer joins at 2 and which ends at 2.5, nothing in
  // [2.5,3), backward [3,4) 200 FLOPs overlapping a "dp" transfer [3,4.5), a transfer without a
  // category [4.5,5).
  TaskGraph g(1);
  ExecutionTrace t;
  t.num_ranks = 1;
  const int s = g.Stream("c");
  auto add = [&](TaskKind k, Phase phase, const char* category, double flops, double start,
                 double joined, double end) {
    Task x;
    x.kind = k;
    x.stream = s;
    x.phase = phase;
    x.category = category;
    x.flops = flops;
    x.peer = 0;
    const TaskId id = g.Add(x);
    t.records.push_back(TraceRecord{id, 0, s, start, end, joined});
  };
  add(TaskKind::kCompute, Phase::kForward, "", 100, 0, 0, 1);
  add(TaskKind::kCompute, Phase::kRecompute, "", 50, 1, 1, 1.5);
  add(TaskKind::kCopy, Phase::kCommunication, "tp", 0, 1.5, 2, 2.5);
  add(TaskKind::kCompute, Phase::kBackward, "", 200, 3, 3, 4);
  add(TaskKind::kCopy, Phase::kCommunication, "dp", 0, 3, 3, 4.5);
  add(TaskKind::kCopy, Phase::kCommunication, "", 0, 4.5, 4.5, 5);
  MetricsInput in;
  in.samples_per_iteration = 1;
  in.peak_flops_per_rank = {100};
  const Metrics m = ComputeMetrics(g, t, in);
  EXPECT_DOUBLE_EQ(m.iteration_time_s, 5);
  EXPECT_DOUBLE_EQ(m.mfu, 300.0 / 5 / 100);
  EXPECT_DOUBLE_EQ(m.hfu, 350.0 / 5 / 100);
  // Communicating alone: [2,2.5), [4,4.5), [4.5,5); waiting for the peer in [1.5,2) is idle.
  EXPECT_DOUBLE_EQ(m.exposed_comm_fraction, 1.5 / 5);
  EXPECT_EQ(m.exposed_comm_by_category,
            (std::map<std::string, double>{{"dp", 0.1}, {"other", 0.1}, {"tp", 0.1}}));
  EXPECT_DOUBLE_EQ(m.idle_fraction, 1.0 / 5);  // [1.5,2) and [2.5,3)
}

TEST(Metrics, PeakMemoryIsExplainedByCategory) {
  // weights +10 at t=0, activations +20 at 1 and -20 at 2, comm buffers +5 at 3: the peak (30)
  // is at t=1, made of weights and activations; the later buffers are not part of it.
  TaskGraph g(1);
  ExecutionTrace t;
  t.num_ranks = 1;
  const int s = g.Stream("c");
  auto add = [&](TaskKind k, const char* category, double mem, double start, double end) {
    Task x;
    x.kind = k;
    x.stream = s;
    x.category = category;
    x.memory_delta_bytes = mem;
    const TaskId id = g.Add(x);
    t.records.push_back(TraceRecord{id, 0, s, start, end, start});
  };
  add(TaskKind::kMemory, "weights", 10, 0, 0);
  add(TaskKind::kMemory, "activations", 20, 1, 1);
  add(TaskKind::kCompute, "", 0, 1, 2);
  add(TaskKind::kMemory, "activations", -20, 2, 2);
  add(TaskKind::kMemory, "", 5, 3, 3);
  MetricsInput in;
  in.measured_iterations = 1;
  in.memory_capacity_per_rank = {25};
  const Metrics m = ComputeMetrics(g, t, in);
  EXPECT_DOUBLE_EQ(m.peak_memory_bytes[0], 30);
  const std::map<std::string, double> expected = {{"activations", 20}, {"weights", 10}};
  EXPECT_EQ(m.peak_memory_breakdown[0], expected);
  EXPECT_EQ(m.memory_capacity_bytes, (std::vector<double>{25}));
  EXPECT_EQ(m.oom_ranks, (std::vector<int>{0}));
}

TEST(Metrics, MismatchedTraceIsAnError) {
  Fixture f;
  f.t.records.pop_back();
  EXPECT_THROW(ComputeMetrics(f.g, f.t, MetricsInput{}), Error);
  Fixture g;
  MetricsInput in;
  in.warmup_iterations = 2;
  try {
    ComputeMetrics(g.g, g.t, in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "iteration 2 has no tasks");
  }
}

// A TraceMeter fed in iteration order and sealed between tasks gives the whole trace's figures.
TEST(Metrics, SealedPieceByPieceEqualsWhole) {
  Fixture f;
  const MetricsInput in = FixtureInput();
  const Metrics whole = ComputeMetrics(f.g, f.t, in);
  TraceMeter meter(1, in);
  // The seals a simulation would send: no later task starts before them.
  const double seal_after[] = {0, 0, 1, 1.5, 1.5, 2, 2};
  for (const Task& task : f.g.tasks()) {
    meter.Add(task, f.t.records[static_cast<size_t>(task.id)]);
    meter.Seal(seal_after[task.id]);
  }
  const Metrics m = meter.Finish({}).metrics;
  EXPECT_DOUBLE_EQ(m.iteration_time_s, whole.iteration_time_s);
  EXPECT_DOUBLE_EQ(m.exposed_comm_fraction, whole.exposed_comm_fraction);
  EXPECT_DOUBLE_EQ(m.idle_fraction, whole.idle_fraction);
  EXPECT_DOUBLE_EQ(m.model_flops_per_iteration, whole.model_flops_per_iteration);
  EXPECT_EQ(m.peak_memory_bytes, whole.peak_memory_bytes);
  EXPECT_EQ(m.peak_memory_breakdown, whole.peak_memory_breakdown);
  EXPECT_EQ(m.exposed_comm_by_category, whole.exposed_comm_by_category);
}

// A two-stage pipeline on three ranks: stage 0 is rank 0, stage 1 ranks 1 and 2 (a tensor
// pair). Iteration 0 is warm-up and ends at 7; iterations 1 and 2 are measured, each one
// rank 0 forward of 1 s, a 0.5 s copy on rank 0 that no compute hides, the stage-1 forwards,
// the backwards and rank 0's 0.5 s optimizer step; iteration 2 is iteration 1 shifted by 7.5 s
// with rank 1's forward starting 0.5 s later. Tasks are added in start order.
struct PipelineFixture {
  TaskGraph g{3};
  ExecutionTrace t;
  PipelineFixture() {
    const int compute = g.Stream("compute"), side = g.Stream("side");
    t.num_ranks = 3;
    auto add = [&](int rank, TaskKind k, int stream, int it, Phase ph, double start, double end) {
      Task x;
      x.kind = k;
      x.rank = rank;
      x.stream = stream;
      x.iteration = it;
      x.phase = ph;
      x.peer = rank;
      const TaskId id = g.Add(x);
      t.records.push_back(TraceRecord{id, rank, stream, start, end, start});
    };
    const TaskKind c = TaskKind::kCompute;
    add(0, c, compute, 0, Phase::kForward, 0, 1);
    add(1, c, compute, 0, Phase::kForward, 1.5, 2.5);
    add(2, c, compute, 0, Phase::kForward, 1.5, 2.5);
    add(1, c, compute, 0, Phase::kBackward, 2.5, 4.5);
    add(2, c, compute, 0, Phase::kBackward, 2.5, 4);
    add(0, c, compute, 0, Phase::kBackward, 5, 7);
    for (int it = 1; it <= 2; ++it) {
      const double at = 7 + 7.5 * (it - 1), late = it == 2 ? 0.5 : 0;
      add(0, c, compute, it, Phase::kForward, at, at + 1);
      add(0, TaskKind::kCopy, side, it, Phase::kCommunication, at + 1, at + 1.5);
      add(1, c, compute, it, Phase::kForward, at + 1.5 + late, at + 2.5);
      add(2, c, compute, it, Phase::kForward, at + 2, at + 2.5);
      add(1, c, compute, it, Phase::kBackward, at + 2.5, at + 4.5);
      add(2, c, compute, it, Phase::kBackward, at + 2.5, at + 3.5);
      // Overlaps the backward on another stream: counted once.
      add(2, c, side, it, Phase::kRecompute, at + 2.5, at + 3);
      add(0, c, compute, it, Phase::kBackward, at + 5, at + 7);
      add(0, c, compute, it, Phase::kOptimizer, at + 7, at + 7.5);
    }
  }
  static MetricsInput Input() {
    MetricsInput in;
    in.warmup_iterations = 1;
    in.measured_iterations = 2;
    in.samples_per_iteration = 1;
    in.rank_stage = {0, 1, 1};
    return in;
  }
};

// Window [7, 22): 15 s. Busy per rank over it: rank 0 2 x (1 + 2 + 0.5) = 7 s, rank 1
// (1 + 2) + (0.5 + 2) = 5.5 s, rank 2 2 x (0.5 + 1) = 3 s (its recomputation overlaps its
// backward).
TEST(Metrics, PipelineStageTimeStartupAndBubble) {
  PipelineFixture f;
  const Metrics m = ComputeMetrics(f.g, f.t, PipelineFixture::Input());
  EXPECT_DOUBLE_EQ(m.iteration_time_s, 15.0 / 2);
  ASSERT_EQ(m.stage_compute_s.size(), 2u);
  EXPECT_DOUBLE_EQ(m.stage_compute_s[0], 7.0 / 2);
  EXPECT_DOUBLE_EQ(m.stage_compute_s[1], 5.5 / 2);  // the busier of ranks 1 and 2
  ASSERT_EQ(m.stage_bubble_fraction.size(), 2u);
  EXPECT_DOUBLE_EQ(m.stage_bubble_fraction[0], 1 - 7 / 15.0);
  EXPECT_DOUBLE_EQ(m.stage_bubble_fraction[1], ((1 - 5.5 / 15) + (1 - 3 / 15.0)) / 2);
  // Iteration 1: rank 0 forwards at 7, stage 1 at 8.5; iteration 2: 14.5 and 16.5 (rank 2). The
  // warm-up iteration's forwards do not count.
  EXPECT_DOUBLE_EQ(m.startup_s, (1.5 + 2.0) / 2);
  // The bubble counts the exposed copy on rank 0 ([8, 8.5) and [15.5, 16)); idle time does not.
  EXPECT_DOUBLE_EQ(m.idle_fraction, ((15 - 7 - 1) + (15 - 5.5) + (15 - 3)) / (3 * 15.0));
}

TEST(Metrics, PipelineFiguresSealedPieceByPieceEqualWhole) {
  PipelineFixture f;
  const Metrics whole = ComputeMetrics(f.g, f.t, PipelineFixture::Input());
  TraceMeter meter(3, PipelineFixture::Input());
  for (const Task& task : f.g.tasks()) {
    const TraceRecord& r = f.t.records[static_cast<size_t>(task.id)];
    meter.Add(task, r);
    meter.Seal(r.start_s);  // tasks come in start order: none later starts before
  }
  const Metrics m = meter.Finish({}).metrics;
  EXPECT_EQ(m.stage_compute_s, whole.stage_compute_s);
  EXPECT_EQ(m.stage_bubble_fraction, whole.stage_bubble_fraction);
  EXPECT_DOUBLE_EQ(m.startup_s, whole.startup_s);
}

// A folded rank's figures are its representative's: rank 2 stands for itself and rank 3.
TEST(Metrics, PipelineFiguresOfAFoldedRankAreItsRepresentatives) {
  PipelineFixture f;
  MetricsInput in = PipelineFixture::Input();
  in.rank_stage = {0, 1, 1, 1};
  TraceMeter meter(4, in, {}, {0, 1, 2, 2});
  for (const Task& task : f.g.tasks()) meter.Add(task, f.t.records[static_cast<size_t>(task.id)]);
  const Metrics m = meter.Finish({0, 1, 2, 2}).metrics;
  ASSERT_EQ(m.stage_bubble_fraction.size(), 2u);
  EXPECT_DOUBLE_EQ(m.stage_bubble_fraction[1], ((1 - 5.5 / 15) + 2 * (1 - 3 / 15.0)) / 3);
}

TEST(Metrics, NoStagesNoPipelineFiguresAndAWrongStageMapIsAnError) {
  PipelineFixture f;
  MetricsInput in = PipelineFixture::Input();
  in.rank_stage.clear();
  const Metrics m = ComputeMetrics(f.g, f.t, in);
  EXPECT_TRUE(m.stage_compute_s.empty());
  EXPECT_TRUE(m.stage_bubble_fraction.empty());
  EXPECT_EQ(m.startup_s, 0);
  in.rank_stage = {0, 1};
  try {
    ComputeMetrics(f.g, f.t, in);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "metrics: the stage map does not match the ranks");
  }
  in.rank_stage = {0, -1, 1};
  try {
    ComputeMetrics(f.g, f.t, in);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "metrics: a rank has a negative stage");
  }
}

}  // namespace
}  // namespace stratasim
