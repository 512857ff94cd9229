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

}  // namespace
}  // namespace stratasim
