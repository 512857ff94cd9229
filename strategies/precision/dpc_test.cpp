#include <gtest/gtest.h>

#include <string>

#include "core/compute_model.h"
#include "core/hardware.h"
#include "strategies/data/ddp.h"
#include "strategies/precision/precision_strategies.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

// The tiny GPT (hidden 256, sequence 128, vocabulary 1000, 4 layers) on one server of 4 GPUs of
// `gpu`, 1 sample per GPU.
Scenario Tiny(const std::string& gpu = "H100-SXM5") {
  Scenario s = testing::TinyGptScenario({4, 1, 4, 1, 4, 4});
  s.cluster.groups[0].gpu = gpu;
  s.cluster.gpu_kinds = {*FindBuiltinGpu(gpu)};
  return s;
}

StrategySpec Spec(const std::string& kind, std::map<std::string, std::string> options) {
  return testing::SpecOf("p", kind, options);
}

const Task& Find(const Plan& p, const std::string& suffix) {
  for (const Task& t : p.graph.tasks()) {
    const std::string name = t.name.str();
    if (t.rank == 0 && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return t;
    }
  }
  throw Error("no task " + suffix);
}

bool Has(const Plan& p, const std::string& suffix) {
  try {
    Find(p, suffix);
    return true;
  } catch (const Error&) {
    return false;
  }
}

TEST(CapacityGroups, EqualCountsSmallestFirst) {
  EXPECT_EQ(CapacityGroups({5, 1, 3, 2}, 2), (std::vector<int>{1, 0, 1, 0}));
  EXPECT_EQ(CapacityGroups({6, 5, 4, 3, 2, 1}, 3), (std::vector<int>{2, 2, 1, 1, 0, 0}));
  EXPECT_EQ(CapacityGroups({7, 8, 9}, 1), (std::vector<int>{0, 0, 0}));
}

TEST(CapacityGroups, TiesShareTheGroupOfTheirMeanRank) {
  // Ranks 0, 1, {2, 3}, 4 of 5: the tie's mean rank 2.5 falls in the second half.
  EXPECT_EQ(CapacityGroups({1, 3, 4, 4, 9}, 2), (std::vector<int>{0, 0, 1, 1, 1}));
  // All equal: the mean rank 1.5 of 4 is in the first half.
  EXPECT_EQ(CapacityGroups({2, 2, 2, 2}, 2), (std::vector<int>{0, 0, 0, 0}));
  // More groups than layers: the groups stay in order.
  EXPECT_EQ(CapacityGroups({10, 20}, 3), (std::vector<int>{0, 1}));
}

TEST(Dpc, LargerLayersComputeInLowerPrecision) {
  // Capacities: proj 65,536, qkv 196,608, logits 256,000, mlp_up and mlp_down 262,144 each:
  // ranked, the 8 MLP GEMMs (ranks 9 to 16 of 17) are the second half.
  const Plan p = PlanDpc(Tiny(), Spec("dpc", {}));
  for (const char* op : {"qkv", "proj"}) {
    for (const char* pass : {"fwd", "bwd", "wgrad"}) {
      const std::string name = std::string("layer2/") + op + "/" + pass;
      EXPECT_EQ(Find(p, name).dtype, DType::kBF16) << name;
      EXPECT_FALSE(Has(p, std::string("layer2/") + op + "_quant/fwd"));
    }
  }
  EXPECT_EQ(Find(p, "head/logits/fwd").dtype, DType::kBF16);
  for (const char* op : {"mlp_up", "mlp_down"}) {
    for (const char* pass : {"fwd", "bwd", "wgrad"}) {
      const std::string name = std::string("layer2/") + op + "/" + pass;
      EXPECT_EQ(Find(p, name).dtype, DType::kFP8) << name;
    }
    EXPECT_EQ(Find(p, std::string("layer2/") + op + "_quant/fwd").op, OpKind::kElementwise);
    EXPECT_EQ(Find(p, std::string("layer2/") + op + "_dy_quant/bwd").op, OpKind::kElementwise);
    EXPECT_EQ(Find(p, std::string("layer2/") + op + "_dw_quant/bwd").op, OpKind::kElementwise);
  }
  // Elementwise kernels and attention stay BF16.
  EXPECT_EQ(Find(p, "layer2/norm1/fwd").dtype, DType::kBF16);
}

TEST(Dpc, EachLayersGradientTravelsAtItsBitWidth) {
  const double h = 256, ffn = 4 * h, V = 1000, seq = 128;
  // One bucket per layer: every layer's gradient is over 1 byte.
  const Plan p = PlanDpc(Tiny(), Spec("dpc", {{"bucket_size", "1B"}}));
  const Plan base = PlanDdp(Tiny(), Spec("ddp", {{"bucket_size", "1B"}}));
  const auto& c = p.graph.collectives();
  const auto& b = base.graph.collectives();
  ASSERT_EQ(c.size(), 6u);  // head, layer3 .. layer0, embedding
  ASSERT_EQ(b.size(), 6u);
  // The head owns its norm (its logits weight is the embedding's table): BF16.
  EXPECT_DOUBLE_EQ(c[0].bytes, 2 * h * 2);
  const double layer = 12 * h * h + 13 * h;  // GPT layer parameters
  const double mlp_weights = 2 * h * ffn;
  for (int k = 1; k <= 4; ++k) {
    EXPECT_DOUBLE_EQ(b[k].bytes, layer * 2);
    EXPECT_DOUBLE_EQ(c[k].bytes, (layer - mlp_weights) * 2 + mlp_weights * 1) << k;
  }
  EXPECT_DOUBLE_EQ(c[5].bytes, (V + seq) * h * 2);  // the embedding: BF16
  // A dequantize kernel follows each all-reduce of FP8 gradients: the MLP weights, read at 1
  // byte and written at 2.
  EXPECT_DOUBLE_EQ(Find(p, "it0/decode/bucket1").bytes, mlp_weights * 3);
  EXPECT_EQ(Find(p, "it0/decode/bucket1").phase, Phase::kOptimizer);
  EXPECT_FALSE(Has(p, "it0/decode/bucket0"));
  EXPECT_FALSE(Has(p, "it0/decode/bucket5"));
}

// Seconds of rank 0's forward and backward kernels (the quantize kernels included) alone on
// the GPU, as the compute model gives them.
double ComputeSeconds(const Plan& p, const Scenario& s) {
  double t = 0;
  for (const Task& task : p.graph.tasks()) {
    if (task.rank != 0 || task.kind != TaskKind::kCompute) continue;
    if (task.phase != Phase::kForward && task.phase != Phase::kBackward) continue;
    t += ComputeTaskSeconds(task, s.cluster.gpu_kinds[0], s.simulation);
  }
  return t;
}

TEST(Dpc, LowersComputeTimeOnAGptWhoseGemmsAreComputeBound) {
  Scenario s = Tiny();
  s.model.hidden = 2048;
  s.model.heads = 16;
  s.model.sequence = 1024;
  s.training.micro_batch = 4;
  s.training.global_batch = 16;
  const double ddp = ComputeSeconds(PlanDdp(s, Spec("ddp", {})), s);
  const double dpc = ComputeSeconds(PlanDpc(s, Spec("dpc", {})), s);
  const double fp8 =
      ComputeSeconds(PlanUniformPrecision(s, Spec("uniform-precision", {{"format", "fp8"}})), s);
  EXPECT_LT(dpc, ddp);
  EXPECT_LT(fp8, dpc);
  // An FP8 GEMM's math runs at the FP8 peak (1,979 against 989 TFLOP/s on H100).
  const Plan p = PlanDpc(s, Spec("dpc", {}));
  const Task& up = Find(p, "layer0/mlp_up/fwd");
  const GpuSpec& h100 = s.cluster.gpu_kinds[0];
  EXPECT_DOUBLE_EQ(ComputeTaskSeconds(up, h100, s.simulation),
                   up.flops / (1979e12 * ComputeEfficiency(up, h100, s.simulation)) +
                       s.simulation.kernel_launch_s);
}

TEST(UniformPrecision, Bf16IsDdp) {
  const Scenario s = Tiny();
  const Plan ddp = PlanDdp(s, Spec("ddp", {{"bucket_size", "1MB"}}));
  const Plan bf16 = PlanUniformPrecision(
      s, Spec("uniform-precision", {{"format", "bf16"}, {"bucket_size", "1MB"}}));
  ASSERT_EQ(ddp.graph.tasks().size(), bf16.graph.tasks().size());
  for (size_t i = 0; i < ddp.graph.tasks().size(); ++i) {
    const Task& a = ddp.graph.tasks()[i];
    const Task& b = bf16.graph.tasks()[i];
    EXPECT_EQ(a.name.str(), b.name.str());
    EXPECT_EQ(a.dtype, b.dtype) << a.name.str();
    EXPECT_EQ(a.flops, b.flops) << a.name.str();
    EXPECT_EQ(a.bytes, b.bytes) << a.name.str();
    EXPECT_EQ(a.memory_delta_bytes, b.memory_delta_bytes) << a.name.str();
    EXPECT_EQ(a.deps, b.deps) << a.name.str();
  }
  ASSERT_EQ(ddp.graph.collectives().size(), bf16.graph.collectives().size());
  for (size_t i = 0; i < ddp.graph.collectives().size(); ++i) {
    EXPECT_EQ(ddp.graph.collectives()[i].bytes, bf16.graph.collectives()[i].bytes);
  }
}

std::string ErrorOf(const Scenario& s, const StrategySpec& spec) {
  return testing::PlanErrorOf(s, spec);
}

TEST(Dpc, FormatsTheGpuCannotRunAreLocatedErrors) {
  EXPECT_EQ(ErrorOf(Tiny("A100-SXM4-80GB"), Spec("dpc", {{"formats", "bf16,fp8"}})),
            "s.yaml:9:5: strategies[0].options.formats = \"bf16,fp8\": GPU kind A100-SXM4-80GB "
            "(server group g) cannot run fp8 GEMMs: the catalog has no fp8 peak for it (it has "
            "fp32, tf32, fp16, bf16, int8, int4)");
  // The default list on A100: located at the strategy, the option not being written.
  EXPECT_EQ(ErrorOf(Tiny("A100-SXM4-80GB"), Spec("dpc", {}))
                .rfind("s.yaml:8:5: strategies[0].options.formats: GPU kind A100-SXM4-80GB", 0),
            0u)
      << ErrorOf(Tiny("A100-SXM4-80GB"), Spec("dpc", {}));
  EXPECT_NE(ErrorOf(Tiny(), Spec("dpc", {{"formats", "fp16,int8,int4"}}))
                .find("GPU kind H100-SXM5 (server group g) cannot run int4 GEMMs"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(Tiny(), Spec("uniform-precision", {{"format", "int4"}})),
            "s.yaml:9:5: strategies[0].options.format = \"int4\": GPU kind H100-SXM5 (server "
            "group g) cannot run int4 GEMMs: the catalog has no int4 peak for it (it has fp32, "
            "tf32, fp16, bf16, fp8, int8)");
  EXPECT_EQ(ErrorOf(Tiny("A100-SXM4-80GB"), Spec("dpc", {{"formats", "fp16,int8,int4"}})),
            "no error");
}

TEST(Dpc, BadFormatListsAreLocatedErrors) {
  EXPECT_EQ(ErrorOf(Tiny(), Spec("dpc", {{"formats", "bf16,fp6"}})),
            "s.yaml:9:5: strategies[0].options.formats = \"bf16,fp6\": unknown format \"fp6\" "
            "(known: bf16, fp16, fp8, int8, int4)");
  EXPECT_EQ(ErrorOf(Tiny(), Spec("dpc", {{"formats", " "}})),
            "s.yaml:9:5: strategies[0].options.formats = \" \": the list of formats is empty: "
            "give one or more, highest precision first (known: bf16, fp16, fp8, int8, int4)");
  EXPECT_EQ(ErrorOf(Tiny(), Spec("dpc", {{"formats", "bf16,,fp8"}})),
            "s.yaml:9:5: strategies[0].options.formats = \"bf16,,fp8\": entry 2 of the list of "
            "formats is empty (known: bf16, fp16, fp8, int8, int4)");
  EXPECT_EQ(ErrorOf(Tiny(), Spec("dpc", {{"formats", "fp8,bf16"}})),
            "s.yaml:9:5: strategies[0].options.formats = \"fp8,bf16\": formats must decrease in "
            "precision, highest first: bf16 (16 bits) follows fp8 (8 bits)");
  EXPECT_EQ(ErrorOf(Tiny(), Spec("dpc", {{"formats", "bf16, fp16"}})),
            "s.yaml:9:5: strategies[0].options.formats = \"bf16, fp16\": formats must decrease "
            "in precision, highest first: fp16 (16 bits) follows bf16 (16 bits)");
  EXPECT_EQ(ErrorOf(Tiny(), Spec("uniform-precision", {{"format", "fp6"}}))
                .rfind("s.yaml:9:5: strategies[0].options.format = \"fp6\": ", 0),
            0u);
  EXPECT_NE(ErrorOf(Tiny(), Spec("uniform-precision", {})).find("strategies[0].options.format"),
            std::string::npos);
}

TEST(Dpc, Fp8TrainingIsALocatedError) {
  Scenario s = Tiny();
  s.training.precision = DType::kFP8;
  EXPECT_EQ(ErrorOf(s, Spec("dpc", {})),
            "s.yaml:8:5: strategies[0]: layer-wise precision chooses each GEMM's format itself: "
            "train in bf16, fp16 or fp32 (training.precision fp8 already runs the transformer "
            "GEMMs in FP8)");
}

}  // namespace
}  // namespace stratasim
