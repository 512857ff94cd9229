// Today's training stack simulated end to end (issue 19): Megatron's distributed optimizer with
// its parameter all-gather overlapped with the next forward, and Transformer Engine's TP
// communication overlap, whose decomposed all-gather + GEMM approaches max(GEMM, all-gather).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "sim/executor.h"
#include "strategies/plan.h"
#include "tests/scenario_text.h"
#include "tests/simulated_strategy.h"

namespace stratasim {
namespace {

using testing::Simulated;
using testing::SimulatedStrategy;

TEST(DistributedOptimizerSimulated, OverlappedParamGatherIsNoSlower) {
  const Scenario s = LoadScenarioText(
      "name: distopt\n" + testing::TwoA100Servers(1) +
          R"(model: {kind: gpt, layers: 4, hidden: 1024, heads: 16, sequence: 1024, vocabulary: 8192}
training: {global_batch: 16, micro_batch: 4, precision: bf16, iterations: {warmup: 1, measured: 2}}
strategies:
  - {name: ar, kind: tensor, options: {degree: 4}}
  - {name: do, kind: tensor, options: {degree: 4, distributed_optimizer: true, bucket_size: 4MiB}}
  - {name: do-sync, kind: tensor, options: {degree: 4, distributed_optimizer: true, bucket_size: 4MiB, overlap_param_gather: false}}
  - {name: 3d-do, kind: 3d, options: {tensor: 2, stages: 2, data: 2, distributed_optimizer: true, bucket_size: 4MiB}}
  - {name: 3d-do-sync, kind: 3d, options: {tensor: 2, stages: 2, data: 2, distributed_optimizer: true, bucket_size: 4MiB, overlap_param_gather: false}}
)",
      "distopt.yaml");
  const double ar = Simulated(s, "ar").metrics.iteration_time_s;
  const double overlapped = Simulated(s, "do").metrics.iteration_time_s;
  const double sync = Simulated(s, "do-sync").metrics.iteration_time_s;
  RecordProperty("allreduce_s", std::to_string(ar));
  RecordProperty("overlap_param_gather_s", std::to_string(overlapped));
  RecordProperty("sync_param_gather_s", std::to_string(sync));
  EXPECT_LE(overlapped, sync);
  // The gathers across the two servers' NICs are visible when not overlapped.
  EXPECT_LT(overlapped, sync * 0.999);
  EXPECT_LE(Simulated(s, "3d-do").metrics.iteration_time_s,
            Simulated(s, "3d-do-sync").metrics.iteration_time_s);
}

// One all-gather + GEMM of rank 0: the layer's qkv forward in iteration 0, micro-batch 0.
struct Span {
  double start = std::numeric_limits<double>::infinity(), end = 0;
  double gemm = 0;  // the GEMM kernels' time
  double comm = 0;  // the plain collective's time (not overlapped)
};

Span QkvForward(const SimulatedStrategy& sim, const std::string& layer) {
  Span out;
  const std::string op = "it0/mb0/" + layer + "/qkv/";
  for (const TraceRecord& r : sim.trace.records) {
    const Task& t = sim.plan.graph.task(r.task);
    // A receive is posted before its data can come (its start says nothing of the op).
    if (t.rank != 0 || t.kind == TaskKind::kRecv) continue;
    const std::string name = t.name.str();
    if (name.rfind(op + "fwd", 0) != 0 && name.rfind(op + "tp_all_gather", 0) != 0) continue;
    out.start = std::min(out.start, r.start_s);
    out.end = std::max(out.end, r.end_s);
    if (t.kind == TaskKind::kCompute) out.gemm += r.end_s - r.start_s;
    if (t.kind == TaskKind::kCollective) out.comm += r.end_s - r.peers_joined_s;
  }
  return out;
}

TEST(TpCommOverlapSimulated, AllGatherAndGemmApproachTheLongerOfTheTwo) {
  // t = 4 on one NVSwitch server (no data parallelism): qkv's GEMM (2 b s h 3h / t = 103
  // GFLOP) takes several times its all-gather (b s h = 64 MiB, 3/4 of it over NVLink). With
  // b s = 8192 tokens a chunk's GEMM (2048 rows) still fills the SMs' waves (the compute
  // model's tile and wave quantisation, core/compute_model.h): with smaller chunks the
  // decomposed GEMMs lose more than the overlap hides, which the simulator shows too.
  const Scenario s = LoadScenarioText(
      R"(name: tp-overlap
cluster:
  servers:
    - {name: box, count: 1, gpu: A100-SXM4-80GB, gpus_per_server: 4,
       nvswitch: {bandwidth: "300GB/s", latency: "1us"}}
model: {kind: gpt, layers: 2, hidden: 4096, heads: 32, sequence: 2048, vocabulary: 8192}
training: {global_batch: 4, micro_batch: 4, precision: bf16, iterations: {warmup: 0, measured: 1}}
strategies:
  - {name: sp, kind: tensor, options: {degree: 4, sequence_parallel: true}}
  - {name: overlap, kind: tensor, options: {degree: 4, sequence_parallel: true, tp_comm_overlap: true}}
)",
      "tp-overlap.yaml");
  const SimulatedStrategy plain = Simulated(s, "sp"), overlap = Simulated(s, "overlap");
  const Span a = QkvForward(plain, "layer1"), b = QkvForward(overlap, "layer1");
  const double t = 4;
  const double serial = a.end - a.start;  // all-gather, then GEMM
  const double span = b.end - b.start;
  RecordProperty("gemm_s", std::to_string(a.gemm));
  RecordProperty("all_gather_s", std::to_string(a.comm));
  RecordProperty("serial_s", std::to_string(serial));
  RecordProperty("overlapped_s", std::to_string(span));
  ASSERT_GT(a.comm, 0);
  ASSERT_LT(a.comm, a.gemm);
  // Never below either part: the chunked GEMMs run one after another, the last chunk's input
  // arrives after the ring's t - 1 steps.
  EXPECT_GE(span, std::max(b.gemm, a.comm) * (1 - 1e-9));
  // Within the pipeline's fill of one step: the first chunk's transfer, at most a chunk of
  // the all-gather (a.comm / (t - 1)), plus the GEMM's chunked efficiency loss (b.gemm above
  // a.gemm), which the bound's GEMM term already counts.
  EXPECT_LE(span, std::max(b.gemm, a.comm) + a.comm / (t - 1));
  EXPECT_LT(span, serial);
  EXPECT_LT(overlap.metrics.iteration_time_s, plain.metrics.iteration_time_s);
}

// The bundled scenario of today's stack loads, and its plan has each feature: FP8 GEMMs, one
// fused attention kernel per layer and pass, the distributed optimizer's reduce-scatter and
// parameter all-gather, the overlapped TP chunks; the strategies that turn one feature off say so.
TEST(ModernH100Scenario, EachStrategyHasItsFeatures) {
  Scenario s = LoadScenarioFile(std::string(STRATASIM_SOURCE_DIR) + "/scenarios/modern-h100.yaml");
  ASSERT_EQ(s.strategies.size(), 6u);
  EXPECT_EQ(s.training.precision, DType::kFP8);
  EXPECT_EQ(s.model.attention, Attention::kFlash);
  EXPECT_EQ(ScenarioFor(s, s.strategies[1]).training.precision, DType::kBF16);
  EXPECT_EQ(ScenarioFor(s, s.strategies[2]).model.attention, Attention::kUnfused);
  EXPECT_EQ(ScenarioFor(s, s.strategies[5]).training.micro_batch, 1);
  // One iteration of 8 micro-batches: enough to see every kind of task.
  s.training.global_batch = 16;
  s.training.warmup_iterations = 0;
  s.training.measured_iterations = 1;
  const Plan plan = PlanStrategy(s, s.strategies[0]);
  bool fp8_gemm = false, fused = false, chunk = false;
  for (const Task& t : plan.graph.tasks()) {
    fp8_gemm = fp8_gemm || (t.op == OpKind::kGemm && t.dtype == DType::kFP8);
    fused = fused || (t.op == OpKind::kFusedAttention && t.causal);
    chunk = chunk || t.name.str().find("/chunk") != std::string::npos;
  }
  EXPECT_TRUE(fp8_gemm && fused && chunk);
  bool reduce_scatter = false, all_gather = false;
  for (const Collective& c : plan.graph.collectives()) {
    reduce_scatter = reduce_scatter || c.kind == CollectiveKind::kReduceScatter;
    all_gather = all_gather || c.kind == CollectiveKind::kAllGather;
  }
  EXPECT_TRUE(reduce_scatter && all_gather);
}

}  // namespace
}  // namespace stratasim
