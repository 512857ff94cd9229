// Layer-wise low precision simulated end to end (issue 22, DPC): a weight layer's GEMMs take
// flops / (peak(format) x efficiency) on the GPU, its quantize kernels bytes / bandwidth, and
// DPC's lower-precision MLP GEMMs lower the compute time against uniform BF16.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/scenario.h"
#include "tests/simulated_strategy.h"

namespace stratasim {
namespace {

// One server of 2 H100s; a GPT of one layer, hidden 1024 (16 heads), sequence 512, micro-batch
// 4: its MLP up-projection is [2048 tokens x 1024] x [1024 x 4096], its QKV [2048 x 1024] x
// [1024 x 3072]. Efficiency 0.5 and no launch overhead keep the closed forms plain; no folding
// or fusing, so that every kernel has its own record.
const char* kScenario = R"(name: low-precision
cluster:
  servers:
    - name: box
      gpu: H100-SXM5
      gpus_per_server: 2
      nvswitch: {bandwidth: "450GB/s", latency: "1us"}
model: {kind: gpt, layers: 1, hidden: 1024, heads: 16, sequence: 512, vocabulary: 1000}
training: {global_batch: 8, micro_batch: 4, precision: bf16, iterations: {warmup: 0, measured: 1}}
simulation: {compute_efficiency: 0.5, kernel_launch: "0us", fold: off, fuse: off}
strategies:
  - {name: dpc, kind: dpc}
  - {name: bf16, kind: uniform-precision, options: {format: bf16}}
)";

constexpr double kTokens = 2048, kHidden = 1024;
constexpr double kH100Bf16 = 989e12, kH100Fp8 = 1979e12, kH100Bandwidth = 3350e9;

double Duration(const testing::SimulatedStrategy& run, const std::string& suffix) {
  for (const Task& t : run.plan.graph.tasks()) {
    const std::string name = t.name.str();
    if (t.rank == 0 && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const TraceRecord& r = run.trace.records.at(t.id);
      return r.end_s - r.start_s;
    }
  }
  ADD_FAILURE() << "no task " << suffix;
  return 0;
}

// tile_eff x wave_eff of an [m, n] output on H100's 132 SMs in 128 x 128 tiles (m and n
// multiples of 128, so tile_eff = 1), as core/compute_model.h defines it.
double WaveEfficiency(double m, double n) {
  const double tiles = (m / 128) * (n / 128);
  return tiles / (std::ceil(tiles / 132) * 132);
}

TEST(LowPrecision, GemmsTakeFlopsOverTheirFormatsPeakTimesEfficiency) {
  const Scenario s = LoadScenarioText(kScenario, "low-precision.yaml");
  const testing::SimulatedStrategy dpc = testing::Simulated(s, "dpc");
  const testing::SimulatedStrategy bf16 = testing::Simulated(s, "bf16");
  // Capacities (parameters): logits 1.02 M, proj 1.05 M, qkv 3.1 M, mlp_up and mlp_down 4.2 M
  // each: ranked in two groups of equal count, the MLP's two GEMMs (mean rank 3.5 of 5) run in
  // FP8 and the rest in BF16.
  const double up_flops = 2 * kTokens * kHidden * 4 * kHidden;
  const double up_fp8 = up_flops / (kH100Fp8 * 0.5 * WaveEfficiency(kTokens, 4 * kHidden));
  const double up_bf16 = up_flops / (kH100Bf16 * 0.5 * WaveEfficiency(kTokens, 4 * kHidden));
  EXPECT_NEAR(Duration(dpc, "layer0/mlp_up/fwd"), up_fp8, 1e-6 * up_fp8);
  EXPECT_NEAR(Duration(bf16, "layer0/mlp_up/fwd"), up_bf16, 1e-6 * up_bf16);
  const double qkv_flops = 2 * kTokens * kHidden * 3 * kHidden;
  const double qkv_bf16 = qkv_flops / (kH100Bf16 * 0.5 * WaveEfficiency(kTokens, 3 * kHidden));
  EXPECT_NEAR(Duration(dpc, "layer0/qkv/fwd"), qkv_bf16, 1e-6 * qkv_bf16);
  // The quantize kernel before the FP8 GEMM reads X (2048 x 1024) and W (1024 x 4096) in BF16
  // and writes them in FP8, at 0.8 of the bandwidth (the default memory efficiency).
  const double cast_bytes = 3 * (kTokens * kHidden + kHidden * 4 * kHidden);
  const double cast_s = cast_bytes / (kH100Bandwidth * 0.8);
  EXPECT_NEAR(Duration(dpc, "layer0/mlp_up_quant/fwd"), cast_s, 1e-6 * cast_s);
}

TEST(LowPrecision, DpcLowersTheComputeTimeAndTheGradientBytes) {
  const Scenario s = LoadScenarioText(kScenario, "low-precision.yaml");
  const testing::SimulatedStrategy dpc = testing::Simulated(s, "dpc");
  const testing::SimulatedStrategy bf16 = testing::Simulated(s, "bf16");
  auto compute_s = [](const testing::SimulatedStrategy& run) {
    double t = 0;
    for (const Task& task : run.plan.graph.tasks()) {
      if (task.rank != 0 || task.kind != TaskKind::kCompute) continue;
      const TraceRecord& r = run.trace.records.at(task.id);
      t += r.end_s - r.start_s;
    }
    return t;
  };
  EXPECT_LT(compute_s(dpc), compute_s(bf16));
  auto wire = [](const testing::SimulatedStrategy& run) {
    double b = 0;
    for (const Collective& c : run.plan.graph.collectives()) b += c.bytes;
    return b;
  };
  // The MLP's two weights (8 h^2) travel at 1 byte instead of 2.
  EXPECT_DOUBLE_EQ(wire(bf16) - wire(dpc), 8 * kHidden * kHidden);
}

}  // namespace
}  // namespace stratasim
