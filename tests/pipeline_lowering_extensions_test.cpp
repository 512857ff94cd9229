// The pipeline lowering's extensions for the pipeline planners (strategies/planners/planner.h),
// simulated end to end: micro-batches of different sizes (AutoPipe's micro-batch slicer) and an
// explicit stage -> GPU mapping.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "sim/executor.h"
#include "strategies/pipeline/pipeline.h"
#include "strategies/pipeline/pipeline_lowering.h"
#include "strategies/pipeline/stage_workload.h"

namespace stratasim {
namespace {

// Four A100s on one NVSwitch; a GPT whose layers are all alike and whose head is tiny, so that
// the even split gives equal stages; micro-batches of 2.
Scenario FourGpus() {
  return LoadScenarioText(R"(
name: slicing
cluster:
  servers:
    - name: box
      count: 1
      gpu: A100-SXM4-80GB
      gpus_per_server: 4
      nvswitch: {bandwidth: "300GB/s", latency: "2us"}
model: {kind: gpt, layers: 8, hidden: 2048, heads: 16, sequence: 1024, vocabulary: 128}
training:
  global_batch: 8
  micro_batch: 2
  precision: bf16
  iterations: {warmup: 0, measured: 1}
simulation: {kernel_launch: "0us", fidelity: stream}
strategies:
  - {name: ddp, kind: ddp}
)",
                          "slicing.yaml");
}

struct LoweredRun {
  Plan plan;
  ExecutionTrace trace;
  Metrics metrics;
};

// 1F1B over `stages` x `data` GPUs with micro-batches of `sizes` samples (empty: 4 of 2) and
// the rank mapping `ranks` (empty: order `order`).
LoweredRun Lowered(int stages, int data, const std::vector<int>& sizes,
                   const std::vector<int>& ranks, const std::string& order = "tpd") {
  const Scenario s = FourGpus();
  PipelineShape o;
  o.p = stages;
  o.d = data;
  o.m = 8 / (2 * data);
  o.schedule = "1f1b";
  o.partition = "even";
  o.order = order;
  o.bucket_cap = 25.0 * 1024 * 1024;
  o.ranks = ranks;
  o.micro_batch_sizes = sizes;
  Workload w = PipelineStageWorkload(s, o);
  const std::vector<int> bounds = EvenPartition(w, stages);
  PipelineLowering lowering(s, o, std::move(w), {}, bounds);
  std::vector<MicroBatchWorkload> sized;
  for (int n : sizes) {
    const bool known = std::any_of(sized.begin(), sized.end(),
                                   [n](const MicroBatchWorkload& x) { return x.samples == n; });
    if (known || n == s.training.micro_batch) continue;
    StageWorkloadChoice choice;
    choice.micro_batch = n;
    sized.push_back({n, PipelineStageWorkload(s, o, choice), {}});
  }
  lowering.SetMicroBatchWorkloads(std::move(sized));
  LoweredRun run{lowering.Lower(), {}, {}};
  run.plan.graph.Validate();
  run.trace = sim::Simulate(run.plan.graph, s.cluster, s.simulation);
  StrategySpec spec;
  spec.name = "pp";
  spec.kind = "pipeline";
  run.metrics = Evaluate(s, spec, run.plan.graph, run.trace, run.plan.samples_per_iteration,
                         run.plan.tokens_per_sample)
                    .metrics;
  return run;
}

// The pipeline's start-up: when the last stage's first forward kernel starts.
double StartUp(const LoweredRun& run, int last_stage_rank) {
  double first = 1e300;
  for (const Task& t : run.plan.graph.tasks()) {
    if (t.kind != TaskKind::kCompute || t.phase != Phase::kForward) continue;
    if (t.rank != last_stage_rank) continue;
    first = std::min(first, run.trace.records.at(t.id).start_s);
  }
  return first;
}

TEST(MicroBatchSlicing, SplittingTheFirstMicroBatchCutsTheStartUp) {
  const LoweredRun even = Lowered(4, 1, {}, {});
  const LoweredRun sliced = Lowered(4, 1, {1, 1, 2, 2, 2}, {});
  EXPECT_EQ(sliced.plan.samples_per_iteration, even.plan.samples_per_iteration);
  const double before = StartUp(even, 3), after = StartUp(sliced, 3);
  // Stages 0-2 forward a half micro-batch before the last stage can start: about half.
  EXPECT_LT(after, 0.6 * before) << after << " s vs " << before << " s";
  EXPECT_GT(after, 0.4 * before) << after << " s vs " << before << " s";
}

TEST(MicroBatchSlicing, TwoMicroBatchesOfOneCountAsOneOfTwo) {
  // Micro-batches given explicitly at the training size change nothing.
  const LoweredRun even = Lowered(4, 1, {}, {});
  const LoweredRun same = Lowered(4, 1, {2, 2, 2, 2}, {});
  EXPECT_DOUBLE_EQ(same.metrics.iteration_time_s, even.metrics.iteration_time_s);
  EXPECT_DOUBLE_EQ(same.metrics.mfu, even.metrics.mfu);
  // The same samples and model FLOPs: MFU changes only through the simulated time.
  const LoweredRun split = Lowered(4, 1, {1, 1, 2, 2, 2}, {});
  EXPECT_NEAR(split.metrics.model_flops_per_iteration, even.metrics.model_flops_per_iteration,
              1e-9 * even.metrics.model_flops_per_iteration);
  EXPECT_NEAR(split.metrics.mfu * split.metrics.iteration_time_s,
              even.metrics.mfu * even.metrics.iteration_time_s,
              1e-9 * even.metrics.mfu * even.metrics.iteration_time_s);
  EXPECT_NEAR(split.metrics.samples_per_s * split.metrics.iteration_time_s, 8, 1e-9);
}

TEST(ExplicitRanks, StagesRunWhereTheMappingPutsThem) {
  // Reversed: stage s on GPU 3 - s. On one NVSwitch every mapping is alike, so the results are
  // those of the default order.
  const LoweredRun plain = Lowered(4, 1, {}, {});
  const LoweredRun reversed = Lowered(4, 1, {}, {3, 2, 1, 0});
  EXPECT_EQ(reversed.plan.rank_stage, (std::vector<int>{3, 2, 1, 0}));
  for (const Task& t : reversed.plan.graph.tasks()) {
    if (t.name.str().find("embedding") != std::string::npos) {
      EXPECT_EQ(t.rank, 3);
    }
    if (t.name.str().find("logits") != std::string::npos) {
      EXPECT_EQ(t.rank, 0);
    }
  }
  EXPECT_DOUBLE_EQ(reversed.metrics.iteration_time_s, plain.metrics.iteration_time_s);
  EXPECT_DOUBLE_EQ(StartUp(reversed, 0), StartUp(plain, 3));
  // Two stages x two replicas: the mapping of order dpt written out is order dpt.
  const ParallelLayout dpt{1, 2, 2, "dpt"};
  std::vector<int> ranks;
  for (int q = 0; q < 2; ++q) {
    for (int st = 0; st < 2; ++st) ranks.push_back(dpt.Rank(q, st, 0));
  }
  const LoweredRun by_order = Lowered(2, 2, {}, {}, "dpt");
  const LoweredRun mapped = Lowered(2, 2, {}, ranks);
  EXPECT_EQ(mapped.plan.rank_stage, by_order.plan.rank_stage);
  EXPECT_DOUBLE_EQ(mapped.metrics.iteration_time_s, by_order.metrics.iteration_time_s);
  EXPECT_EQ(mapped.metrics.peak_memory_bytes, by_order.metrics.peak_memory_bytes);
}

}  // namespace
}  // namespace stratasim
