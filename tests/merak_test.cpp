// Merak's runtime techniques simulated end to end (Lai et al. 2023, TPDS, §4): sub-pipelined
// tensor parallelism brings a layer's time close to max(compute, communication); the shifted
// critical path schedule is the fastest of Merak's four 1F1B schedules on a pipeline that
// recomputes; stage-aware recomputation evens out the stages' peak memory.
#include "strategies/planners/merak.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "models/recompute.h"
#include "sim/executor.h"
#include "strategies/pipeline/pipeline.h"
#include "strategies/pipeline/pipeline_lowering.h"
#include "strategies/tensor/megatron.h"

namespace stratasim {
namespace {

// `gpus` A100s on one NVSwitch of `bandwidth`; a GPT whose layers are all alike and whose head
// is small.
Scenario Box(int gpus, const std::string& bandwidth, const std::string& model) {
  return LoadScenarioText(R"(
name: merak
cluster:
  servers:
    - name: box
      count: 1
      gpu: A100-SXM4-80GB
      gpus_per_server: )" + std::to_string(gpus) +
                              R"(
      nvswitch: {bandwidth: ")" +
                              bandwidth +
                              R"(", latency: "2us"}
model: )" + model + R"(
training: {global_batch: 8, micro_batch: 1, precision: bf16, iterations: {warmup: 0, measured: 1}}
simulation: {kernel_launch: "0us"}
strategies:
  - {name: ddp, kind: ddp}
)",
                          "merak.yaml");
}

struct Simulation {
  Plan plan;
  ExecutionTrace trace;
  Metrics metrics;
};

Simulation Simulate(const Scenario& s, const PipelineShape& o, Workload w,
                    std::vector<Workload> per_stage, std::vector<int> bounds) {
  Simulation run;
  run.plan = PipelineLowering(s, o, std::move(w), std::move(per_stage), std::move(bounds)).Lower();
  run.trace = sim::Simulate(run.plan.graph, s.cluster, s.simulation);
  run.metrics = Evaluate(s, s.strategies.front(), run.plan.graph, run.trace,
                         run.plan.samples_per_iteration, run.plan.tokens_per_sample)
                    .metrics;
  return run;
}

PipelineShape Shape(int p, int t, int m, const std::string& schedule) {
  PipelineShape o;
  o.p = p;
  o.t = t;
  o.m = m;
  o.schedule = schedule;
  o.order = "tpd";
  o.bucket_cap = 25.0 * 1024 * 1024;
  return o;
}

// ---- Sub-pipelined tensor parallelism ----

struct LayerTimes {
  double span = 0;     // first to last forward task of the transformer layers, per layer
  double compute = 0;  // forward kernels of rank 0, per layer
  double comm = 0;     // forward tensor-parallel collectives of rank 0, per layer
};

LayerTimes ForwardOfLayers(const Simulation& run, int layers) {
  LayerTimes x;
  double begin = 1e300, end = 0;
  for (const Task& t : run.plan.graph.tasks()) {
    if (t.rank != 0 || t.phase == Phase::kBackward) continue;
    const std::string name = t.name.str();
    if (name.find("/layer") == std::string::npos) continue;
    if (t.kind != TaskKind::kCompute && t.kind != TaskKind::kCollective) continue;
    const TraceRecord& r = run.trace.records.at(t.id);
    if (t.phase == Phase::kForward && t.kind == TaskKind::kCompute)
      x.compute += r.end_s - r.start_s;
    if (t.kind == TaskKind::kCollective && t.category == "tp") x.comm += r.end_s - r.start_s;
    begin = std::min(begin, r.start_s);
    end = std::max(end, r.end_s);
  }
  x.span = (end - begin) / layers;
  x.compute /= layers;
  x.comm /= layers;
  return x;
}

TEST(MerakSubPipelinedTensorParallel, ALayerTakesAboutMaxOfComputeAndCommunication) {
  // t = 4 at 100 GB/s: a layer's two all-reduces of b s h take about as long as its GEMMs.
  const int layers = 8;
  const Scenario s = Box(4, "100GB/s",
                         "{kind: gpt, layers: " + std::to_string(layers) +
                             ", hidden: 4096, heads: 32, sequence: 2048, vocabulary: 128}");
  const Workload w =
      TensorParallelShard(BuildWorkload(s.model, 1, DType::kBF16), 4, false, s.model);
  const int n = static_cast<int>(w.layers.size());
  LayerTimes at[4];
  for (int level = 0; level <= 3; ++level) {
    PipelineShape o = Shape(1, 4, 1, "1f1b");
    o.tp_subpipeline = level;
    at[level] = ForwardOfLayers(Simulate(s, o, w, {}, {0, n}), layers);
    std::printf(
        "tp_subpipeline %d: forward per layer %.3f ms (compute %.3f ms, all-reduce %.3f ms)\n",
        level, at[level].span * 1e3, at[level].compute * 1e3, at[level].comm * 1e3);
  }
  const double compute = at[0].compute, comm = at[0].comm;
  // Unsplit, the all-reduces are exposed: the layer takes compute + communication.
  EXPECT_NEAR(at[0].span, compute + comm, 0.02 * (compute + comm));
  EXPECT_GT(comm, 0.5 * compute);  // the setting this test is about: both matter
  for (int level = 1; level <= 3; ++level) EXPECT_LT(at[level].span, at[0].span) << level;
  EXPECT_LT(at[2].span, at[1].span);
  EXPECT_LE(at[3].span, at[2].span);
  // Level 3 hides the all-reduces behind the halves' compute: the layer takes about
  // max(compute, communication) of its halves. Half-size GEMMs run less efficiently (the
  // roofline charges the smaller shape and the weight read twice), and half-size all-reduces
  // pay their latencies twice, so the halves' figures are the bound.
  const double bound = std::max(at[3].compute, at[3].comm);
  EXPECT_LT(at[3].span, 1.05 * bound);
  EXPECT_GT(at[3].span, 0.95 * bound);
  EXPECT_LT(at[3].compute, 1.2 * compute);
}

// ---- Schedules and stage-aware recomputation ----

// A GPT of 16 alike layers on 4 GPUs, 4 stages, 8 micro-batches, as Merak's pipelines: p2p over
// an NVSwitch.
const char kGpt[] =
    "{kind: gpt, layers: 16, hidden: 2048, heads: 16, sequence: 2048, vocabulary: 128}";

Workload Model(const Scenario& s, Recompute mode) {
  ModelSpec m = s.model;
  m.recompute = mode;
  return BuildWorkload(m, 1, DType::kBF16);
}

TEST(MerakSchedules, ShiftedCriticalPathIsTheFastestOnAPipelineThatRecomputes) {
  const Scenario s = Box(4, "300GB/s", kGpt);
  const Workload w = Model(s, Recompute::kFull);
  const std::vector<int> bounds = EvenPartition(w, 4);
  std::map<std::string, double> seconds;
  for (const std::string schedule :
       {"1f1b", "pre_recompute", "last_no_recompute", "shifted_critical_path"}) {
    seconds[schedule] =
        Simulate(s, Shape(4, 1, 8, schedule), w, {}, bounds).metrics.iteration_time_s;
    std::printf("%-22s %.3f ms\n", schedule.c_str(), seconds[schedule] * 1e3);
  }
  const double shifted = seconds["shifted_critical_path"];
  EXPECT_LT(shifted, seconds["1f1b"]);
  EXPECT_LT(shifted, seconds["pre_recompute"]);
  EXPECT_LT(shifted, seconds["last_no_recompute"]);
  EXPECT_LT(seconds["pre_recompute"], seconds["1f1b"]);
}

TEST(MerakStageAwareRecompute, EvensOutThePeakMemoryOfTheStages) {
  const Scenario s = Box(4, "300GB/s", kGpt);
  const Workload plain = Model(s, Recompute::kNone);
  const std::vector<int> bounds = EvenPartition(plain, 4);
  // Stage i checkpoints its first floor(r_i L_i) transformer layers.
  const std::vector<double> r = planners::StageAwareRecomputeRatios(0.75, 4);
  std::vector<Workload> per_stage;
  for (int st = 0; st < 4; ++st) {
    Workload part = plain;
    part.layers.assign(plain.layers.begin() + bounds[st], plain.layers.begin() + bounds[st + 1]);
    int blocks = 0;
    for (const LayerCost& L : part.layers) blocks += L.recomputable ? 1 : 0;
    const int k = planners::CheckpointedLayers(r[st], blocks);
    ApplyRecompute(part, k > 0 ? Recompute::kFull : Recompute::kNone, k);
    Workload whole = plain;
    std::copy(part.layers.begin(), part.layers.end(), whole.layers.begin() + bounds[st]);
    per_stage.push_back(std::move(whole));
  }
  auto spread = [](const std::vector<double>& peak) {
    const auto [lo, hi] = std::minmax_element(peak.begin(), peak.end());
    return (*hi - *lo) / *hi;
  };
  const Simulation none = Simulate(s, Shape(4, 1, 8, "1f1b"), plain, {}, bounds);
  const Simulation aware = Simulate(s, Shape(4, 1, 8, "1f1b"), plain, per_stage, bounds);
  const Simulation full =
      Simulate(s, Shape(4, 1, 8, "1f1b"), Model(s, Recompute::kFull), {}, bounds);
  for (const auto& [name, run] : {std::pair<const char*, const Simulation*>{"none", &none},
                                  {"stage-aware 0.75", &aware},
                                  {"full", &full}}) {
    const std::vector<double>& peak = run->metrics.peak_memory_bytes;
    std::printf("%-17s peak GiB per stage %.2f %.2f %.2f %.2f (spread %.0f%%), %.3f ms\n", name,
                peak[0] / 1073741824.0, peak[1] / 1073741824.0, peak[2] / 1073741824.0,
                peak[3] / 1073741824.0, 100 * spread(peak), run->metrics.iteration_time_s * 1e3);
  }
  EXPECT_LT(spread(aware.metrics.peak_memory_bytes), 0.5 * spread(none.metrics.peak_memory_bytes));
  const double most_none = *std::max_element(none.metrics.peak_memory_bytes.begin(),
                                             none.metrics.peak_memory_bytes.end());
  const double most_aware = *std::max_element(aware.metrics.peak_memory_bytes.begin(),
                                              aware.metrics.peak_memory_bytes.end());
  EXPECT_LT(most_aware, most_none);
  // It recomputes less than full recomputation, so it is faster.
  EXPECT_LT(aware.metrics.iteration_time_s, full.metrics.iteration_time_s);
}

}  // namespace
}  // namespace stratasim
