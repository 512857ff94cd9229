// Pipeline parallelism simulated end to end: with equal stages and negligible communication the
// idle fraction of a stage's compute stream (the bubble) matches the closed forms of Narayanan
// et al. 2021 (SC, §2.2): (p - 1) / (m + p - 1) for GPipe and 1F1B, (p - 1) / (v m + p - 1) for
// interleaved 1F1B; GPipe's peak memory grows with m while 1F1B's does not.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "sim/executor.h"
#include "strategies/pipeline/pipeline.h"

namespace stratasim {
namespace {

// Four A100s behind an NVSwitch so fast that a 4 MB activation takes 40 ns; a GPT whose layers
// are all alike and whose head is tiny (vocabulary 128), so that even stages are equal.
std::string ScenarioText(int global_batch, int warmup, int measured) {
  return R"(
name: bubble
cluster:
  servers:
    - name: box
      count: 1
      gpu: A100-SXM4-80GB
      gpus_per_server: 4
      nvswitch: {bandwidth: "100TB/s", latency: "0us"}
model: {kind: gpt, layers: 8, hidden: 2048, heads: 16, sequence: 1024, vocabulary: 128}
training:
  global_batch: )" +
         std::to_string(global_batch) + R"(
  micro_batch: 1
  precision: bf16
  iterations: {warmup: )" +
         std::to_string(warmup) + ", measured: " + std::to_string(measured) + R"(}
simulation: {kernel_launch: "0us", fidelity: stream}
strategies:
  - {name: ddp, kind: ddp}
)";
}

struct PipelineRun {
  TaskGraph graph;
  ExecutionTrace trace;
  Metrics metrics;
};

PipelineRun Simulate(int micro_batches, std::map<std::string, std::string> options, int warmup = 0,
                     int measured = 1) {
  const Scenario s = LoadScenarioText(ScenarioText(micro_batches, warmup, measured), "bubble.yaml");
  StrategySpec spec;
  spec.name = "pp";
  spec.kind = "pipeline";
  spec.key_path = "strategies[0]";
  options.emplace("stages", "4");
  for (auto& [k, v] : options) spec.options[k] = OptionValue{v, SourceLocation{"t.yaml", 1, 1}};
  Plan plan = PlanPipeline(s, spec);
  PipelineRun run{std::move(plan.graph), {}, {}};
  run.trace = sim::Simulate(run.graph, s.cluster, s.simulation);
  run.metrics = Evaluate(s, spec, run.graph, run.trace, plan.samples_per_iteration,
                         plan.tokens_per_sample, plan.rank_stage)
                    .metrics;
  return run;
}

// The bubble of `rank`: the fraction of the pipeline's forward/backward span (first forward to
// last backward over all stages; the optimizer step after the flush is not pipelined work) in
// which the rank's compute stream ran no forward or backward kernel.
double Bubble(const PipelineRun& run, int rank) {
  double begin = 1e300, end = 0, busy = 0;
  for (const Task& t : run.graph.tasks()) {
    if (t.kind != TaskKind::kCompute) continue;
    if (t.phase != Phase::kForward && t.phase != Phase::kBackward) continue;
    const TraceRecord& r = run.trace.records.at(t.id);
    begin = std::min(begin, r.start_s);
    end = std::max(end, r.end_s);
    if (t.rank == rank) busy += r.end_s - r.start_s;
  }
  return 1 - busy / (end - begin);
}

TEST(PipelineBubble, GpipeAndOneFOneBMatchTheClosedForm) {
  const int p = 4;
  for (const std::string schedule : {"gpipe", "1f1b"}) {
    for (int m : {4, 8}) {
      const PipelineRun run = Simulate(m, {{"schedule", schedule}});
      const double expected = (p - 1.0) / (m + p - 1);
      for (int rank = 0; rank < p; ++rank) {
        EXPECT_NEAR(Bubble(run, rank), expected, 0.02)
            << schedule << " m=" << m << " rank " << rank;
      }
    }
  }
}

// The report's idle time (core/metrics.h: neither computing nor communicating) is the bubble:
// with equal stages, (p - 1) / (m + p - 1) of the forward/backward span, per rank.
TEST(PipelineBubble, ReportedIdleTimeIsTheBubble) {
  const int p = 4;
  for (int m : {4, 8}) {
    const PipelineRun run = Simulate(m, {{"schedule", "1f1b"}});
    double begin = 1e300, end = 0;
    for (const Task& t : run.graph.tasks()) {
      if (t.kind != TaskKind::kCompute || t.phase == Phase::kOptimizer) continue;
      begin = std::min(begin, run.trace.records.at(t.id).start_s);
      end = std::max(end, run.trace.records.at(t.id).end_s);
    }
    const double span = end - begin;
    const double idle_s = run.metrics.idle_fraction * run.metrics.iteration_time_s;
    EXPECT_NEAR(idle_s, (p - 1.0) / (m + p - 1) * span, 0.02 * span) << "m=" << m;
  }
}

// Forward seconds of one micro-batch through `rank`'s layers (all its chunks).
double ForwardPerMicroBatch(const PipelineRun& run, int rank, int micro_batches) {
  double busy = 0;
  for (const Task& t : run.graph.tasks()) {
    if (t.kind != TaskKind::kCompute || t.phase != Phase::kForward || t.rank != rank) continue;
    busy += run.trace.records.at(t.id).end_s - run.trace.records.at(t.id).start_s;
  }
  return busy / micro_batches;
}

// The report's per-stage figures (core/metrics.h) on equal stages: each stage's bubble is the
// closed form's share of the forward/backward span; the start-up is p - 1 stages' forwards of
// one micro-batch, p - 1 chunks' (1/v of a stage) with the interleaved schedule; the stages'
// compute times are equal.
TEST(PipelineBubble, ReportedStageFiguresMatchTheClosedForms) {
  const int p = 4;
  for (const std::string schedule : {"gpipe", "1f1b", "interleaved"}) {
    const int m = 8, v = schedule == "interleaved" ? 2 : 1;
    const PipelineRun run = Simulate(m, {{"schedule", schedule}});
    double begin = 1e300, end = 0;
    for (const Task& t : run.graph.tasks()) {
      if (t.kind != TaskKind::kCompute || t.phase == Phase::kOptimizer) continue;
      begin = std::min(begin, run.trace.records.at(t.id).start_s);
      end = std::max(end, run.trace.records.at(t.id).end_s);
    }
    const double span = end - begin;
    const Metrics& mt = run.metrics;
    ASSERT_EQ(mt.stage_bubble_fraction.size(), static_cast<size_t>(p)) << schedule;
    ASSERT_EQ(mt.stage_compute_s.size(), static_cast<size_t>(p)) << schedule;
    for (int st = 0; st < p; ++st) {
      EXPECT_NEAR(mt.stage_bubble_fraction[st] * mt.iteration_time_s,
                  (p - 1.0) / (v * m + p - 1) * span, 0.02 * span)
          << schedule << " stage " << st;
      EXPECT_NEAR(mt.stage_compute_s[st], mt.stage_compute_s[0], 0.02 * mt.stage_compute_s[0])
          << schedule << " stage " << st;
    }
    const double forward = ForwardPerMicroBatch(run, 1, m);
    EXPECT_NEAR(mt.startup_s, (p - 1) * forward / v, 0.02 * (p - 1) * forward / v) << schedule;
  }
}

TEST(PipelineBubble, InterleavedDividesTheBubbleByV) {
  const int p = 4, v = 2, m = 8;
  const PipelineRun run = Simulate(m, {{"schedule", "interleaved"}, {"virtual_stages", "2"}});
  const double expected = (p - 1.0) / (v * m + p - 1);
  for (int rank = 0; rank < p; ++rank) {
    EXPECT_NEAR(Bubble(run, rank), expected, 0.02) << "rank " << rank;
  }
  const PipelineRun plain = Simulate(m, {{"schedule", "1f1b"}});
  EXPECT_LT(run.metrics.iteration_time_s, plain.metrics.iteration_time_s);
}

TEST(PipelineBubble, GpipePeakMemoryGrowsWithMicroBatchesAndOneFOneBDoesNot) {
  const PipelineRun gpipe4 = Simulate(4, {{"schedule", "gpipe"}});
  const PipelineRun gpipe8 = Simulate(8, {{"schedule", "gpipe"}});
  const PipelineRun ofob4 = Simulate(4, {{"schedule", "1f1b"}});
  const PipelineRun ofob8 = Simulate(8, {{"schedule", "1f1b"}});
  const double g4 = gpipe4.metrics.peak_memory_bytes[0], g8 = gpipe8.metrics.peak_memory_bytes[0];
  const double f4 = ofob4.metrics.peak_memory_bytes[0], f8 = ofob8.metrics.peak_memory_bytes[0];
  // Stage 0 of GPipe holds m micro-batches' activations; of 1F1B p = 4 of them either way.
  const double per_micro_batch = (g8 - g4) / 4;
  EXPECT_GT(per_micro_batch, 0);
  EXPECT_NEAR(f8, f4, 1e-9 * f4);
  EXPECT_NEAR(f4, g4, 1e-9 * g4);  // m = p: the same four micro-batches in flight
  EXPECT_LT(f8, g8 - 3 * per_micro_batch);
}

// PipeDream-2BW fills the pipeline once: without a flush per batch, its steady-state iteration
// has no bubble, so it is faster than 1F1B (which refills every iteration).
TEST(PipelineBubble, PipeDream2BWSkipsTheRefill) {
  const int m = 4;
  const PipelineRun flush = Simulate(m, {{"schedule", "1f1b"}}, 1, 2);
  const PipelineRun two_bw = Simulate(m, {{"schedule", "pipedream_2bw"}}, 1, 2);
  EXPECT_LT(two_bw.metrics.iteration_time_s, 0.8 * flush.metrics.iteration_time_s);
  // Two weight versions: more memory on stage 0 than 1F1B.
  EXPECT_GT(two_bw.metrics.peak_memory_bytes[0], flush.metrics.peak_memory_bytes[0]);
}

// Two replicas of a two-stage pipeline (ranks r * 2 + s): without overlap, each stage's
// gradients are all-reduced between ranks s and s + 2 after the flush, and the plan simulates.
TEST(PipelineBubble, DataParallelReplicasAllReducePerStage) {
  const PipelineRun run =
      Simulate(8, {{"stages", "2"}, {"schedule", "1f1b"}, {"dp_overlap", "false"}});
  ASSERT_EQ(run.graph.collectives().size(), 2u);
  EXPECT_GT(run.metrics.iteration_time_s, 0);
  for (const Collective& c : run.graph.collectives()) {
    EXPECT_EQ(c.ranks.size(), 2u);
    EXPECT_EQ(c.ranks[1] - c.ranks[0], 2);
  }
}

}  // namespace
}  // namespace stratasim
