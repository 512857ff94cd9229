// FP8 training simulated end to end (issue 19): the linear GEMMs run at the GPU's FP8 peak with
// FP8 inputs and BF16 outputs, everything else (elementwise kernels, attention's products,
// collectives) stays BF16, tensor parallelism keeps the FP8 GEMMs when it splits them, MFU is
// measured against the BF16 peak, and the MoE strategies plan Mixtral 8x7B.
#include <gtest/gtest.h>

#include <string>

#include "cli/run_scenario.h"
#include "core/compute_model.h"
#include "core/hardware.h"
#include "core/scenario.h"
#include "sim/executor.h"
#include "strategies/plan.h"

namespace stratasim {
namespace {

// One server of `gpus` H100s on NVSwitch; a 2-layer GPT of hidden 1024 (16 heads), sequence
// 512, micro-batch 4: the QKV GEMM is [2048 tokens x 1024] x [1024 x 3072].
std::string Text(const std::string& precision, const std::string& strategy, int gpus,
                 const std::string& model =
                     "{kind: gpt, layers: 2, hidden: 1024, heads: 16, sequence: 512, "
                     "vocabulary: 1000}",
                 int global_batch = 8, int micro_batch = 4) {
  return R"(name: fp8
cluster:
  servers:
    - name: box
      gpu: H100-SXM5
      gpus_per_server: )" +
         std::to_string(gpus) + R"(
      nvswitch: {bandwidth: "450GB/s", latency: "1us"}
model: )" +
         model +
         R"(
training: {global_batch: )" +
         std::to_string(global_batch) + R"(, micro_batch: )" + std::to_string(micro_batch) +
         ", precision: " + precision + R"(, iterations: {warmup: 0, measured: 1}}
strategies:
  - )" + strategy +
         "\n";
}

constexpr double m = 2048, k = 1024, n = 3072;

const Task& Find(const TaskGraph& g, const std::string& suffix, int rank = 0) {
  for (const Task& t : g.tasks()) {
    const std::string name = t.name.str();
    if (t.rank == rank && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return t;
    }
  }
  throw Error("no task " + suffix);
}

TEST(Fp8Training, LinearGemmsRunAtTheFp8PeakAgainstTheClosedForm) {
  const Scenario s = LoadScenarioText(Text("fp8", "{name: ddp, kind: ddp}", 2), "fp8.yaml");
  const Scenario b = LoadScenarioText(Text("bf16", "{name: ddp, kind: ddp}", 2), "bf16.yaml");
  const Plan plan = PlanStrategy(s, s.strategies[0]);
  const Plan base = PlanStrategy(b, b.strategies[0]);
  const Task& qkv = Find(plan.graph, "layer0/qkv/fwd");
  const Task& qkv16 = Find(base.graph, "layer0/qkv/fwd");
  EXPECT_EQ(qkv.dtype, DType::kFP8);
  EXPECT_EQ(qkv16.dtype, DType::kBF16);
  EXPECT_DOUBLE_EQ(qkv.flops, qkv16.flops);
  EXPECT_DOUBLE_EQ(qkv16.bytes, 2 * (m * k + k * n + m * n));
  EXPECT_DOUBLE_EQ(qkv.bytes, (m * k + k * n) + 2 * m * n);  // FP8 inputs, BF16 output
  EXPECT_EQ(Find(plan.graph, "layer0/qkv/wgrad").dtype, DType::kFP8);
  // Non-GEMM kernels and attention's own products stay BF16, with BF16's bytes.
  for (const char* op : {"layer0/norm1/fwd", "layer0/attention/fwd", "head/logits/fwd"}) {
    EXPECT_EQ(Find(plan.graph, op).dtype, DType::kBF16) << op;
    EXPECT_DOUBLE_EQ(Find(plan.graph, op).bytes, Find(base.graph, op).bytes) << op;
  }
  const Task& cast = Find(plan.graph, "layer0/qkv_fp8_cast/fwd");
  EXPECT_EQ(cast.op, OpKind::kElementwise);
  EXPECT_DOUBLE_EQ(cast.bytes, 4 * (m * k + k * n));
  // Gradients are all-reduced in BF16, as many bytes as in BF16 training.
  double fp8_bytes = 0, bf16_bytes = 0;
  for (const Collective& c : plan.graph.collectives()) {
    EXPECT_EQ(c.dtype, DType::kBF16);
    fp8_bytes += c.bytes;
  }
  for (const Collective& c : base.graph.collectives()) bf16_bytes += c.bytes;
  EXPECT_GT(fp8_bytes, 0);
  EXPECT_DOUBLE_EQ(fp8_bytes, bf16_bytes);

  // Simulated: the roofline at H100's 1,979 TFLOP/s FP8 peak (core/compute_model.h).
  const ExecutionTrace tr = sim::Simulate(plan.graph, s.cluster, s.simulation);
  const GpuSpec& h100 = *FindBuiltinGpu("H100-SXM5");
  EXPECT_DOUBLE_EQ(h100.Peak(DType::kFP8), 1979e12);
  const double eff =
      s.simulation.compute_efficiency * GemmQuantizationEfficiency(qkv.gemm, h100.sm_count);
  const double math_s = qkv.flops / (1979e12 * eff);
  const double memory_s = qkv.bytes / (h100.memory_bandwidth_Bps * s.simulation.memory_efficiency);
  const double want = std::max(math_s, memory_s) + s.simulation.kernel_launch_s;
  const TraceRecord& r = tr.records[static_cast<size_t>(qkv.id)];
  EXPECT_NEAR(r.end_s - r.start_s, want, 1e-9 * want);
  EXPECT_GT(math_s, memory_s);  // compute-bound: the FP8 peak is what sets its time
}

TEST(Fp8Training, TensorParallelSplitKeepsTheFp8Gemms) {
  const Scenario s = LoadScenarioText(
      Text("fp8", "{name: tp, kind: tensor, options: {degree: 2, sequence_parallel: true}}", 2),
      "fp8.yaml");
  const Plan plan = PlanStrategy(s, s.strategies[0]);
  // Column-parallel: each GPU computes n/2 columns from the gathered input.
  const Task& qkv = Find(plan.graph, "layer0/qkv/fwd");
  EXPECT_EQ(qkv.dtype, DType::kFP8);
  EXPECT_DOUBLE_EQ(qkv.bytes, (m * k + k * n / 2) + 2 * m * n / 2);
  EXPECT_DOUBLE_EQ(Find(plan.graph, "layer0/qkv_fp8_cast/fwd").bytes, 4 * (m * k + k * n / 2));
  // Row-parallel: the output projection's k is split.
  const Task& proj = Find(plan.graph, "layer0/proj/fwd");
  EXPECT_EQ(proj.dtype, DType::kFP8);
  EXPECT_DOUBLE_EQ(proj.bytes, (m * k / 2 + k / 2 * k) + 2 * m * k);
  EXPECT_EQ(Find(plan.graph, "layer0/norm1/fwd").dtype, DType::kBF16);
  for (const Collective& c : plan.graph.collectives()) EXPECT_EQ(c.dtype, DType::kBF16);
}

// TP communication overlap splits each GEMM into chunks: they stay FP8 GEMMs.
TEST(Fp8Training, OverlappedTensorParallelChunksStayFp8) {
  const Scenario s = LoadScenarioText(
      Text("fp8",
           "{name: tp, kind: tensor, options: {degree: 2, sequence_parallel: true, "
           "tp_comm_overlap: true}}",
           2),
      "fp8.yaml");
  const Plan plan = PlanStrategy(s, s.strategies[0]);
  int chunks = 0;
  for (const Task& t : plan.graph.tasks()) {
    const std::string name = t.name.str();
    if (name.find("/chunk") == std::string::npos || t.kind != TaskKind::kCompute) continue;
    if (name.find("/qkv/") == std::string::npos && name.find("/proj/") == std::string::npos) {
      continue;
    }
    ++chunks;
    EXPECT_EQ(t.dtype, DType::kFP8) << name;
  }
  EXPECT_GT(chunks, 0);
}

TEST(Fp8Training, MfuIsAgainstTheBf16Peak) {
  const Scenario s = LoadScenarioText(Text("fp8", "{name: ddp, kind: ddp}", 2), "fp8.yaml");
  const MetricsInput in = MetricsInputFor(s, s.strategies.front(), 2, 8, 512);
  ASSERT_EQ(in.peak_flops_per_rank.size(), 2u);
  EXPECT_DOUBLE_EQ(in.peak_flops_per_rank[0], 989e12);
}

TEST(Fp8Training, MoeStrategiesPlanMixtral) {
  // Mixtral 8x7B cut to 2 layers and 256 tokens, one expert per GPU of 8.
  const std::string model = "{preset: mixtral-8x7b, layers: 2, sequence: 256}";
  const std::string strategies =
      "{name: ds, kind: deepspeed-moe}\n"
      "  - {name: fastermoe, kind: fastermoe}\n"
      "  - {name: prophet, kind: prophet}\n"
      "  - {name: pro-prophet, kind: pro-prophet}";
  for (const char* precision : {"bf16", "fp8"}) {
    const Scenario s =
        LoadScenarioText(Text(precision, strategies, 8, model, 8, 1), "mixtral.yaml");
    for (const StrategyRun& r : RunStrategies(s, {})) {
      EXPECT_TRUE(r.result.ok) << precision << " " << r.result.name << ": " << r.result.error;
      EXPECT_GT(r.result.metrics.iteration_time_s, 0) << r.result.name;
    }
    // Expert GEMMs run in FP8 with FP8 training; the dense kernels in BF16.
    const Plan plan = PlanStrategy(s, s.strategies[0]);
    bool ffn = false;
    for (const Task& t : plan.graph.tasks()) {
      if (t.kind != TaskKind::kCompute) continue;
      const std::string name = t.name.str();
      if (name.find("/ffn/") != std::string::npos) {
        ffn = true;
        EXPECT_EQ(t.dtype, std::string(precision) == "fp8" ? DType::kFP8 : DType::kBF16) << name;
      }
      if (name.find("/elementwise/") != std::string::npos) {
        EXPECT_EQ(t.dtype, DType::kBF16) << name;
      }
    }
    EXPECT_TRUE(ffn);
  }
}

}  // namespace
}  // namespace stratasim
