#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/link_efficiency.h"
#include "core/scenario.h"
#include "core/scenario_test_util.h"
#include "gtest/gtest.h"

namespace stratasim {
namespace {

using testing::ErrorOf;
using testing::ExpectError;
using testing::Replace;

// A valid two-server scenario; each error test breaks one thing in it. Line numbers in the
// tests below refer to this text.
const char kBase[] = R"(name: base
cluster:
  servers:
    - name: dgx
      count: 2
      gpu: A100-SXM4-80GB
      gpus_per_server: 8
      nvswitch: {bandwidth: "300GB/s", latency: "1us"}
      nics: {count: 8, bandwidth: "200Gb/s", latency: "1us"}
  network:
    kind: single_switch
    latency: "1us"
model:
  preset: gpt2-medium
training:
  global_batch: 64
  micro_batch: 4
strategies:
  - name: ddp
    kind: ddp
)";

// A one-server box with 4 GPUs; FABRIC is replaced by each test.
const char kBox[] = R"(name: box
cluster:
  servers:
    - name: box
      gpu: RTX3090
      gpus_per_server: 4
      FABRIC
model: {preset: gpt2-small}
training: {global_batch: 8}
strategies: [{name: ddp, kind: ddp}]
)";

std::string Base(const std::string& from, const std::string& to) {
  return Replace(kBase, from, to);
}

std::string Box(const std::string& fabric) { return Replace(kBox, "FABRIC", fabric); }

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// A link as the loader leaves it: the line rate as written, and the achievable rate at the
// default efficiency for its kind and GPU (core/link_efficiency.h).
void ExpectLink(const LinkSpec& link, double line_Bps, LinkKind kind, const std::string& gpu) {
  EXPECT_DOUBLE_EQ(link.line_Bps, line_Bps);
  EXPECT_DOUBLE_EQ(link.efficiency, DefaultLinkEfficiency(kind, gpu));
  EXPECT_DOUBLE_EQ(link.bandwidth_Bps, line_Bps * DefaultLinkEfficiency(kind, gpu));
  EXPECT_FALSE(link.efficiency_given);
}

// --- The happy paths ---------------------------------------------------------------------------

TEST(LoadScenario, BaseLoads) {
  Scenario s = LoadScenarioText(kBase, "t.yaml");
  EXPECT_EQ(s.name, "base");
  EXPECT_EQ(s.file, "t.yaml");
  EXPECT_EQ(s.cluster.NumGpus(), 16);
  EXPECT_EQ(s.model.layers, 24);
  EXPECT_EQ(s.strategies.size(), 1u);
}

TEST(LoadScenario, FullScenarioFillsEveryStruct) {
  const char* yaml = R"(name: full-1.0
cluster:
  gpus:
    - name: MyGPU
      peak: {fp32: "20TFLOPS", bf16: "300TFLOP/s"}
      memory: "48GB"
      memory_bandwidth: "1TB/s"
  servers:
    - name: dgx-a100
      count: 2
      gpu: A100-SXM4-80GB
      gpus_per_server: 8
      nvswitch: {bandwidth: "300GB/s", latency: "1us"}
      nics: {count: 8, bandwidth: "200Gb/s", latency: "2us"}
    - name: box
      gpu: MyGPU
      gpus_per_server: 4
      nvlink: {pairs: [[0, 1], [2, 3]], bandwidth: "56.25GB/s", latency: "1.5us"}
      pcie:
        gpus_per_switch: 2
        sockets: 2
        bandwidth: "15.75GB/s"
        latency: "1us"
        uplink: {bandwidth: "31.5GB/s"}
        socket_link: {bandwidth: "20.8GB/s", latency: "3us"}
      nics: {count: 2, bandwidth: "100Gbps"}
    - name: dgx-a100-b
      gpu: A100-SXM4-80GB
      gpus_per_server: 8
      nvswitch: {bandwidth: "300GB/s"}
      nics: {count: 1, bandwidth: "25GBps"}
  network:
    kind: leaf_spine
    latency: "500ns"
    servers_per_leaf: 2
    oversubscription: "2:1"
model:
  preset: gpt2-xl
  sequence: 2048
training:
  global_batch: 64
  micro_batch: 4
  precision: fp16
  iterations: {warmup: 0, measured: 5}
  seed: 42
simulation:
  compute_efficiency: 0.5
  memory_efficiency: 1
  kernel_launch: "0"
strategies:
  - name: ddp
    kind: ddp
    options: {bucket_size: "25MiB", overlap: true}
  - name: zero-3
    kind: fsdp
)";
  Scenario s = LoadScenarioText(yaml, "full.yaml");
  EXPECT_EQ(s.name, "full-1.0");
  EXPECT_EQ(s.file, "full.yaml");

  const ClusterSpec& c = s.cluster;
  ASSERT_EQ(c.groups.size(), 3u);
  EXPECT_EQ(c.NumServers(), 4);
  EXPECT_EQ(c.NumGpus(), 28);
  // Each kind once, in order of first use.
  ASSERT_EQ(c.gpu_kinds.size(), 2u);
  EXPECT_EQ(c.gpu_kinds[0].name, "A100-SXM4-80GB");
  EXPECT_EQ(c.gpu_kinds[1].name, "MyGPU");
  const GpuSpec& mine = c.gpu_kinds[1];
  EXPECT_DOUBLE_EQ(mine.Peak(DType::kFP32), 20e12);
  EXPECT_DOUBLE_EQ(mine.Peak(DType::kBF16), 300e12);
  EXPECT_FALSE(mine.Supports(DType::kFP16));
  EXPECT_DOUBLE_EQ(mine.memory_bytes, 48e9);
  EXPECT_DOUBLE_EQ(mine.memory_bandwidth_Bps, 1e12);
  EXPECT_EQ(mine.source, "custom GPU defined in full.yaml");
  EXPECT_EQ(c.GpuOfRank(15).name, "A100-SXM4-80GB");
  EXPECT_EQ(c.GpuOfRank(16).name, "MyGPU");
  EXPECT_EQ(c.GpuOfRank(20).name, "A100-SXM4-80GB");

  const ServerGroup& dgx = c.groups[0];
  EXPECT_EQ(dgx.name, "dgx-a100");
  EXPECT_EQ(dgx.count, 2);
  EXPECT_EQ(dgx.gpu, "A100-SXM4-80GB");
  EXPECT_EQ(dgx.gpus_per_server, 8);
  ASSERT_TRUE(dgx.nvswitch.has_value());
  ExpectLink(dgx.nvswitch->link, 300e9, LinkKind::kNvSwitch, dgx.gpu);
  EXPECT_DOUBLE_EQ(dgx.nvswitch->link.latency_s, 1e-6);
  EXPECT_FALSE(dgx.nvlink.has_value());
  EXPECT_FALSE(dgx.pcie.has_value());
  EXPECT_EQ(dgx.nics.count, 8);
  ExpectLink(dgx.nics.link, 25e9, LinkKind::kNic, dgx.gpu);
  EXPECT_DOUBLE_EQ(dgx.nics.link.latency_s, 2e-6);

  const ServerGroup& box = c.groups[1];
  EXPECT_EQ(box.count, 1);  // the default
  EXPECT_FALSE(box.nvswitch.has_value());
  ASSERT_TRUE(box.nvlink.has_value());
  EXPECT_EQ(box.nvlink->pairs, (std::vector<std::pair<int, int>>{{0, 1}, {2, 3}}));
  ExpectLink(box.nvlink->link, 56.25e9, LinkKind::kNvLink, box.gpu);
  EXPECT_DOUBLE_EQ(box.nvlink->link.latency_s, 1.5e-6);
  ASSERT_TRUE(box.pcie.has_value());
  EXPECT_EQ(box.pcie->gpus_per_switch, 2);
  EXPECT_EQ(box.pcie->sockets, 2);
  ExpectLink(box.pcie->link, 15.75e9, LinkKind::kPcie, box.gpu);
  EXPECT_DOUBLE_EQ(box.pcie->link.latency_s, 1e-6);
  ExpectLink(box.pcie->uplink, 31.5e9, LinkKind::kPcie, box.gpu);
  EXPECT_DOUBLE_EQ(box.pcie->uplink.latency_s, 1e-6);                     // from the pcie link
  ExpectLink(box.pcie->socket_link, 20.8e9, LinkKind::kSocket, box.gpu);  // kept: 1.0
  EXPECT_DOUBLE_EQ(box.pcie->socket_link.latency_s, 3e-6);
  EXPECT_EQ(box.nics.count, 2);
  ExpectLink(box.nics.link, 12.5e9, LinkKind::kNic, box.gpu);
  EXPECT_DOUBLE_EQ(box.nics.link.latency_s, 0);  // omitted latency

  EXPECT_DOUBLE_EQ(c.groups[2].nvswitch->link.latency_s, 0);
  ExpectLink(c.groups[2].nics.link, 25e9, LinkKind::kNic, c.groups[2].gpu);

  EXPECT_EQ(c.network.kind, NetworkKind::kLeafSpine);
  EXPECT_DOUBLE_EQ(c.network.switch_latency_s, 500e-9);
  EXPECT_EQ(c.network.servers_per_leaf, 2);
  EXPECT_DOUBLE_EQ(c.network.oversubscription, 2);

  EXPECT_EQ(s.model.kind, "gpt");
  EXPECT_EQ(s.model.preset, "gpt2-xl");
  EXPECT_EQ(s.model.layers, 48);
  EXPECT_EQ(s.model.hidden, 1600);
  EXPECT_EQ(s.model.heads, 25);
  EXPECT_EQ(s.model.sequence, 2048);  // overridden
  EXPECT_EQ(s.model.vocabulary, 50257);
  EXPECT_EQ(s.model.where.file, "full.yaml");
  EXPECT_EQ(s.model.where.line, 37);
  EXPECT_EQ(s.model.where.column, 1);

  EXPECT_EQ(s.training.global_batch, 64);
  EXPECT_EQ(s.training.micro_batch, 4);
  EXPECT_EQ(s.training.precision, DType::kFP16);
  EXPECT_EQ(s.training.warmup_iterations, 0);
  EXPECT_EQ(s.training.measured_iterations, 5);
  EXPECT_EQ(s.training.seed, 42u);

  EXPECT_DOUBLE_EQ(s.simulation.compute_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(s.simulation.memory_efficiency, 1);
  EXPECT_DOUBLE_EQ(s.simulation.kernel_launch_s, 0);

  ASSERT_EQ(s.strategies.size(), 2u);
  const StrategySpec& ddp = s.strategies[0];
  EXPECT_EQ(ddp.name, "ddp");
  EXPECT_EQ(ddp.kind, "ddp");
  EXPECT_EQ(ddp.key_path, "strategies[0]");
  EXPECT_EQ(ddp.where.line, 51);
  EXPECT_EQ(ddp.where.column, 5);
  ASSERT_EQ(ddp.options.size(), 2u);
  EXPECT_EQ(ddp.options.at("bucket_size").text, "25MiB");
  EXPECT_EQ(ddp.options.at("bucket_size").where.line, 53);
  EXPECT_EQ(ddp.options.at("bucket_size").where.column, 28);
  EXPECT_EQ(ddp.options.at("overlap").text, "true");
  EXPECT_EQ(s.strategies[1].name, "zero-3");
  EXPECT_EQ(s.strategies[1].kind, "fsdp");
  EXPECT_EQ(s.strategies[1].key_path, "strategies[1]");
  EXPECT_TRUE(s.strategies[1].options.empty());
}

TEST(LoadScenario, DefaultsWhenOptionalSectionsAreAbsent) {
  Scenario s = LoadScenarioText(R"(name: one
cluster:
  servers:
    - {name: pc, gpu: RTX4090, gpus_per_server: 1}
model: {kind: gpt, layers: 2, hidden: 64, heads: 4, sequence: 128, vocabulary: 1000}
training: {global_batch: 8}
strategies: [{name: single, kind: single}]
)",
                                "t.yaml");
  EXPECT_EQ(s.cluster.NumGpus(), 1);
  EXPECT_EQ(s.cluster.network.kind, NetworkKind::kSingleSwitch);
  EXPECT_EQ(s.model.preset, "");
  EXPECT_EQ(s.model.heads, 4);
  EXPECT_EQ(s.training.micro_batch, 1);
  EXPECT_EQ(s.training.precision, DType::kBF16);
  EXPECT_EQ(s.training.warmup_iterations, 1);
  EXPECT_EQ(s.training.measured_iterations, 2);
  EXPECT_EQ(s.training.seed, 0u);
  EXPECT_DOUBLE_EQ(s.simulation.compute_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(s.simulation.memory_efficiency, 0.8);
  EXPECT_DOUBLE_EQ(s.simulation.kernel_launch_s, 4e-6);
}

TEST(LoadScenario, EveryPresetLoads) {
  const std::vector<std::pair<std::string, std::vector<int>>> presets = {
      {"gpt2-small", {12, 768, 12, 1024}},  {"gpt2-medium", {24, 1024, 16, 1024}},
      {"gpt2-large", {36, 1280, 20, 1024}}, {"gpt2-xl", {48, 1600, 25, 1024}},
      {"gpt3-125m", {12, 768, 12, 2048}},   {"gpt3-350m", {24, 1024, 16, 2048}},
      {"gpt3-1.3b", {24, 2048, 16, 2048}},  {"gpt3-2.7b", {32, 2560, 32, 2048}},
      {"gpt3-6.7b", {32, 4096, 32, 2048}},  {"gpt3-13b", {40, 5120, 40, 2048}},
      {"gpt3-175b", {96, 12288, 96, 2048}},
  };
  for (const auto& [name, dims] : presets) {
    SCOPED_TRACE(name);
    Scenario s = LoadScenarioText(Base("preset: gpt2-medium", "preset: " + name), "t.yaml");
    EXPECT_EQ(s.model.preset, name);
    EXPECT_EQ(s.model.layers, dims[0]);
    EXPECT_EQ(s.model.hidden, dims[1]);
    EXPECT_EQ(s.model.heads, dims[2]);
    EXPECT_EQ(s.model.sequence, dims[3]);
    EXPECT_EQ(s.model.vocabulary, 50257);
  }
}

// The base scenario with its model section replaced by `model` (lines from 14 on).
Scenario WithModel(const std::string& model) {
  return LoadScenarioText(Base("preset: gpt2-medium", model), "t.yaml");
}

TEST(LoadScenario, ModelKindsAndPresets) {
  Scenario bert = WithModel("preset: bert-large\n  recompute: selective");
  EXPECT_EQ(bert.model.kind, "bert");
  EXPECT_EQ(bert.model.layers, 24);
  EXPECT_EQ(bert.model.vocabulary, 30522);
  EXPECT_EQ(bert.model.recompute, Recompute::kSelective);

  Scenario llama = WithModel(
      "preset: llama2-70b\n  sequence: 2048\n  recompute: full\n"
      "  recompute_layers: 40");
  EXPECT_EQ(llama.model.kind, "llama");
  EXPECT_EQ(llama.model.kv_heads, 8);
  EXPECT_EQ(llama.model.ffn_hidden, 28672);
  EXPECT_EQ(llama.model.sequence, 2048);
  EXPECT_EQ(llama.model.recompute, Recompute::kFull);
  EXPECT_EQ(llama.model.recompute_layers, 40);
  // A custom LLaMA without kv_heads has multi-head attention.
  Scenario mha = WithModel(
      "kind: llama\n  layers: 2\n  hidden: 256\n  heads: 8\n"
      "  sequence: 64\n  vocabulary: 100");
  EXPECT_EQ(mha.model.kv_heads, 8);
  EXPECT_EQ(mha.model.ffn_hidden, 0);  // the SwiGLU rule applies when the model is built

  // An MoE model takes its dense dimensions from a GPT preset.
  Scenario moe = WithModel(
      "kind: moe\n  preset: gpt3-1.3b\n  experts: 16\n  top_k: 2\n"
      "  capacity_factor: 1.5");
  EXPECT_EQ(moe.model.kind, "moe");
  EXPECT_EQ(moe.model.hidden, 2048);
  EXPECT_EQ(moe.model.experts, 16);
  EXPECT_EQ(moe.model.top_k, 2);
  EXPECT_DOUBLE_EQ(moe.model.capacity_factor, 1.5);
  Scenario switch_like = WithModel("kind: moe\n  preset: gpt3-125m\n  experts: 8");
  EXPECT_EQ(switch_like.model.top_k, 1);
  EXPECT_DOUBLE_EQ(switch_like.model.capacity_factor, 1.25);

  Scenario resnet = WithModel("kind: resnet50");
  EXPECT_EQ(resnet.model.image_size, 224);
  EXPECT_EQ(resnet.model.classes, 1000);
  Scenario vgg = WithModel("preset: vgg16\n  image_size: 256\n  classes: 10");
  EXPECT_EQ(vgg.model.kind, "vgg16");
  EXPECT_EQ(vgg.model.image_size, 256);
  EXPECT_EQ(vgg.model.classes, 10);

  Scenario sage = WithModel("preset: graphsage-reddit\n  fanouts: [10, 10, 5]");
  EXPECT_EQ(sage.model.kind, "graphsage");
  EXPECT_EQ(sage.model.fanouts, (std::vector<int>{10, 10, 5}));
  EXPECT_EQ(sage.model.layers, 3);
  EXPECT_EQ(sage.model.feature_dim, 602);
  Scenario custom = WithModel(
      "kind: graphsage\n  fanouts: [5]\n  feature_dim: 16\n"
      "  hidden: 32\n  classes: 4\n  graph_vertices: 1000\n"
      "  graph_degree: 7.5");
  EXPECT_DOUBLE_EQ(custom.model.graph_vertices, 1000);
  EXPECT_DOUBLE_EQ(custom.model.graph_degree, 7.5);
}

TEST(LoadScenarioErrors, ModelKindRules) {
  auto model_error = [](const std::string& model) {
    return ErrorOf(Base("preset: gpt2-medium", model));
  };
  ExpectError(model_error("preset: gpt2-medium\n  experts: 8"), 15, 3, "model.experts",
              "only used by kind moe (this model is gpt)");
  ExpectError(model_error("preset: resnet50\n  layers: 8"), 15, 3, "model.layers",
              "only used by kind gpt, bert, llama, moe (this model is resnet50)");
  ExpectError(model_error("preset: llama3-8b\n  kv_heads: 5"), 15, 13, "model.kv_heads",
              "must divide heads (32)");
  ExpectError(model_error("preset: llama3-8b\n  heads: 36"), 15, 10, "model.heads",
              "must divide hidden (4096)");
  ExpectError(model_error("kind: moe\n  preset: gpt2-small"), 14, 3, "model.experts",
              "required field missing (kind moe needs it)");
  ExpectError(model_error("kind: moe\n  preset: gpt2-small\n  experts: 4\n  top_k: 5"), 17, 10,
              "model.top_k", "must be <= experts (4)");
  ExpectError(model_error("kind: moe\n  preset: gpt2-small\n  experts: 4\n  capacity_factor: 0"),
              17, 20, "model.capacity_factor", "must be a number greater than 0");
  ExpectError(model_error("kind: resnet50\n  image_size: 100"), 15, 15, "model.image_size",
              "must be a multiple of 32 (the network halves it five times)");
  ExpectError(model_error("kind: graphsage\n  fanouts: [10, 0]"), 15, 17, "model.fanouts[1]",
              "must be an integer >= 1");
  ExpectError(model_error("kind: graphsage\n  fanouts: []"), 15, 12, "model.fanouts",
              "must not be empty");
  ExpectError(model_error("kind: graphsage\n  fanouts: [10]"), 14, 3, "model.feature_dim",
              "required field missing (kind graphsage needs it, or name a preset)");
  ExpectError(model_error("preset: graphsage-reddit\n  graph_degree: -1"), 15, 17,
              "model.graph_degree", "must be a number greater than 0");
  ExpectError(model_error("preset: resnet50\n  recompute: selective"), 15, 14, "model.recompute",
              "selective recomputation drops attention activations: only for kinds gpt, bert, "
              "llama, moe");
  ExpectError(model_error("preset: gpt2-medium\n  recompute: some"), 15, 14, "model.recompute",
              "must be one of: none, selective, full");
  ExpectError(model_error("preset: gpt2-medium\n  recompute: full\n  recompute_layers: 25"), 16, 21,
              "model.recompute_layers", "must be <= layers (24)");
  ExpectError(model_error("preset: gpt2-medium\n  recompute_layers: 2"), 15, 21,
              "model.recompute_layers", "needs recompute: selective or full");
  ExpectError(model_error("kind: llama\n  preset: bert-base"), 15, 11, "model.preset",
              "is a bert preset, not llama (llama presets: llama2-7b, llama2-13b, llama2-70b, "
              "llama3-8b, llama3-70b, llama3-405b)");
}

TEST(LoadScenario, AttentionIsFlashAndDecodersAreCausalByDefault) {
  for (const char* preset : {"gpt2-medium", "llama3-8b"}) {
    Scenario s = WithModel(std::string("preset: ") + preset);
    EXPECT_EQ(s.model.attention, Attention::kFlash) << preset;
    EXPECT_EQ(s.model.causal, std::optional<bool>(true)) << preset;
  }
  Scenario moe = WithModel("kind: moe\n  preset: gpt3-125m\n  experts: 8");
  EXPECT_EQ(moe.model.attention, Attention::kFlash);
  EXPECT_EQ(moe.model.causal, std::optional<bool>(true));
  // BERT's encoder attends both ways.
  Scenario bert = WithModel("preset: bert-large");
  EXPECT_EQ(bert.model.attention, Attention::kFlash);
  EXPECT_EQ(bert.model.causal, std::optional<bool>(false));

  Scenario unfused = WithModel("preset: gpt2-medium\n  attention: unfused\n  causal: false");
  EXPECT_EQ(unfused.model.attention, Attention::kUnfused);
  EXPECT_EQ(unfused.model.causal, std::optional<bool>(false));
  Scenario causal_bert = WithModel("preset: bert-base\n  causal: True");
  EXPECT_EQ(causal_bert.model.causal, std::optional<bool>(true));
  // Not a transformer: no attention, and the fields stay as they are.
  Scenario resnet = WithModel("kind: resnet50");
  EXPECT_FALSE(resnet.model.causal.has_value());
}

TEST(LoadScenarioErrors, AttentionAndCausal) {
  auto model_error = [](const std::string& model) {
    return ErrorOf(Base("preset: gpt2-medium", model));
  };
  const ConfigError bad = model_error("preset: gpt2-medium\n  attention: fused");
  ExpectError(bad, 15, 14, "model.attention", "must be one of: flash, unfused");
  EXPECT_STREQ(bad.what(),
               "t.yaml:15:14: model.attention = \"fused\": must be one of: flash, unfused");
  const ConfigError maybe = model_error("preset: llama3-8b\n  causal: maybe");
  ExpectError(maybe, 15, 11, "model.causal", "must be true or false");
  EXPECT_STREQ(maybe.what(), "t.yaml:15:11: model.causal = \"maybe\": must be true or false");
  // CNNs and GNNs have no attention.
  ExpectError(model_error("preset: resnet50\n  attention: flash"), 15, 3, "model.attention",
              "only used by kind gpt, bert, llama, moe (this model is resnet50)");
  ExpectError(model_error("preset: graphsage-reddit\n  causal: true"), 15, 3, "model.causal",
              "only used by kind gpt, bert, llama, moe (this model is graphsage)");
}

TEST(LoadScenario, SimulationCalibrationIsReadRelativeToTheScenario) {
  const std::string dir =
      (std::filesystem::path(::testing::TempDir()) / "calibration_rel").lexically_normal().string();
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir + "/gpu.yaml") << "format: stratasim-calibration\nversion: 1\ngpus:\n"
                                        "  - {gpu: A100-SXM4-80GB, memory_efficiency: 0.9}\n";
    std::ofstream(dir + "/s.yaml")
        << Base("strategies:", "simulation: {calibration: gpu.yaml}\nstrategies:");
    std::ofstream(dir + "/bad.yaml")
        << Base("strategies:", "simulation: {calibration: missing.yaml}\nstrategies:");
  }
  const Scenario s = LoadScenarioFile(dir + "/s.yaml");
  ASSERT_TRUE(s.simulation.calibration.has_value());
  EXPECT_EQ(s.simulation.calibration->file, dir + "/gpu.yaml");
  EXPECT_DOUBLE_EQ(*s.simulation.calibration->FindGpu("A100-SXM4-80GB")->memory_efficiency, 0.9);
  try {
    LoadScenarioFile(dir + "/bad.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, dir + "/missing.yaml");
  }
}

TEST(LoadScenario, NvLinkAllConnectsEveryPair) {
  Scenario s = LoadScenarioText(Base(R"(nvswitch: {bandwidth: "300GB/s", latency: "1us"})",
                                     R"(nvlink: {pairs: all, bandwidth: "25GB/s"})"),
                                "t.yaml");
  ASSERT_TRUE(s.cluster.groups[0].nvlink.has_value());
  EXPECT_EQ(s.cluster.groups[0].nvlink->pairs.size(), 28u);
  EXPECT_EQ(s.cluster.groups[0].nvlink->pairs[0], std::make_pair(0, 1));
  EXPECT_EQ(s.cluster.groups[0].nvlink->pairs[27], std::make_pair(6, 7));
}

TEST(LoadScenario, LinksAreFullDuplexUnlessTheScenarioSaysHalf) {
  Scenario full = LoadScenarioText(kBase, "t.yaml");
  EXPECT_TRUE(full.cluster.groups[0].nvswitch->link.full_duplex);
  EXPECT_TRUE(full.cluster.groups[0].nics.link.full_duplex);
  Scenario half = LoadScenarioText(
      Base(R"(nics: {count: 8, bandwidth: "200Gb/s", latency: "1us"})",
           R"(nics: {count: 8, bandwidth: "200Gb/s", latency: "1us", duplex: half})"),
      "t.yaml");
  EXPECT_FALSE(half.cluster.groups[0].nics.link.full_duplex);
  EXPECT_TRUE(half.cluster.groups[0].nvswitch->link.full_duplex);
  Scenario bridges =
      LoadScenarioText(Box(R"(nvlink: {pairs: [[0, 1]], bandwidth: "56GB/s", duplex: half}
      pcie: {bandwidth: "16GB/s", duplex: full, uplink: {duplex: half}})"),
                       "t.yaml");
  EXPECT_FALSE(bridges.cluster.groups[0].nvlink->link.full_duplex);
  EXPECT_TRUE(bridges.cluster.groups[0].pcie->link.full_duplex);
  EXPECT_FALSE(bridges.cluster.groups[0].pcie->uplink.full_duplex);
}

TEST(LoadScenario, OversubscriptionAsANumber) {
  Scenario s = LoadScenarioText(Base("kind: single_switch",
                                     "kind: leaf_spine\n    servers_per_leaf: 1\n"
                                     "    oversubscription: 4"),
                                "t.yaml");
  EXPECT_DOUBLE_EQ(s.cluster.network.oversubscription, 4);
  EXPECT_EQ(s.cluster.network.servers_per_leaf, 1);
}

// --- Files --------------------------------------------------------------------------------------

TEST(LoadScenarioFile, MissingFile) {
  try {
    LoadScenarioFile("/nonexistent/dir/scenario.yaml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, "/nonexistent/dir/scenario.yaml");
    EXPECT_TRUE(Contains(e.rule(), "cannot read file"));
    EXPECT_TRUE(Contains(e.what(), "/nonexistent/dir/scenario.yaml"));
  }
}

TEST(LoadScenarioFile, DirectoryIsNotAFile) {
  try {
    LoadScenarioFile("/tmp");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.rule(), "cannot read file (it is a directory)");
  }
}

TEST(LoadScenarioFile, LoadsAndLocatesErrorsInTheFile) {
  std::string path = ::testing::TempDir() + "stratasim_loader_test.yaml";
  {
    std::ofstream out(path);
    out << kBase;
  }
  Scenario s = LoadScenarioFile(path);
  EXPECT_EQ(s.file, path);
  EXPECT_EQ(s.name, "base");
  {
    std::ofstream out(path);
    out << Base("count: 8,", "count: 3,");
  }
  try {
    LoadScenarioFile(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), path +
                                         ":9:21: cluster.servers[0].nics.count = \"3\": must "
                                         "divide gpus_per_server (8)");
  }
  std::remove(path.c_str());
}

// --- Syntax and structure ----------------------------------------------------------------------

TEST(LoadScenarioErrors, YamlSyntaxErrorHasLineAndColumn) {
  // A key indented under a scalar: yaml-cpp reports the ':' it cannot place (0-based 2:7).
  ConfigError e = ErrorOf("name: x\ncluster: 1\n  model: 2\n");
  ExpectError(e, 3, 8, "", "YAML syntax error: illegal map value");
  EXPECT_STREQ(e.what(), "t.yaml:3:8: <document>: YAML syntax error: illegal map value");
  // An unclosed flow list is reported where the parser gave up looking for the ']'.
  ConfigError unclosed = ErrorOf("name: x\ncluster: [1,\nmodel: 2\n");
  EXPECT_GT(unclosed.where().line, 1);
  EXPECT_EQ(unclosed.rule(), "YAML syntax error: end of sequence flow not found");
}

TEST(LoadScenarioErrors, DuplexIsFullOrHalf) {
  ExpectError(ErrorOf(Base(R"(nvswitch: {bandwidth: "300GB/s", latency: "1us"})",
                           R"(nvswitch: {bandwidth: "300GB/s", duplex: simplex})")),
              8, 48, "cluster.servers[0].nvswitch.duplex", "must be \"full\" or \"half\"");
}

TEST(LoadScenarioErrors, DocumentMustBeAMap) {
  ConfigError e = ErrorOf("just text\n");
  ExpectError(e, 1, 1, "",
              "must be a map, not a scalar (keys: name, cluster, model, training, simulation, "
              "strategies, jobs, placement, search)");
  EXPECT_TRUE(Contains(e.what(), "<document>"));
  for (const char* nothing : {"", "# only a comment\n", "\n\n"}) {
    ExpectError(ErrorOf(nothing), 1, 1, "",
                "the file holds no YAML document (it is empty, or only comments)");
  }
}

TEST(LoadScenarioErrors, UnknownKeyAtTopLevel) {
  ExpectError(ErrorOf(Base("model:", "modle:")), 13, 1, "modle",
              "unknown key (known: name, cluster, model, training, simulation, strategies, jobs, "
              "placement, search)");
}

TEST(LoadScenarioErrors, UnknownKeyNested) {
  ExpectError(ErrorOf(Base("nics: {count: 8,", "nics: {cuont: 8,")), 9, 14,
              "cluster.servers[0].nics.cuont",
              "unknown key (known: count, bandwidth, latency, duplex, efficiency)");
  ExpectError(ErrorOf(Base("      count: 2\n", "      count: 2\n      gpus: 8\n")), 6, 7,
              "cluster.servers[0].gpus",
              "unknown key (known: name, count, gpu, gpus_per_server, nvswitch, nvlink, pcie, "
              "nics)");
  ExpectError(ErrorOf(Base("  micro_batch: 4", "  micro_batch: 4\n  iterations: {warm: 1}")), 18,
              16, "training.iterations.warm", "unknown key (known: warmup, measured)");
  ExpectError(ErrorOf(Base("    kind: ddp", "    kind: ddp\n    option: {}")), 21, 5,
              "strategies[0].option",
              "unknown key (known: name, kind, options, model, training, stragglers)");
}

TEST(LoadScenarioErrors, DuplicateKey) {
  ExpectError(ErrorOf(Base("  micro_batch: 4", "  micro_batch: 4\n  micro_batch: 8")), 18, 3,
              "training.micro_batch", "duplicate key (first at line 17)");
}

TEST(LoadScenarioErrors, WrongTypes) {
  ExpectError(ErrorOf(Base("gpu: A100-SXM4-80GB", "gpu: {kind: A100}")), 6, 12,
              "cluster.servers[0].gpu", "must be a string, not a map");
  ConfigError not_int = ErrorOf(Base("count: 2", "count: 2.5"));
  ExpectError(not_int, 5, 14, "cluster.servers[0].count", "must be an integer >= 1");
  EXPECT_EQ(not_int.value(), "2.5");
  ExpectError(ErrorOf(Base("count: 2", "count: two")), 5, 14, "cluster.servers[0].count",
              "must be an integer >= 1");
  ExpectError(ErrorOf(Replace(kBox,
                              "  servers:\n    - name: box\n      gpu: RTX3090\n      "
                              "gpus_per_server: 4\n      FABRIC\n",
                              "  servers: {a: 1}\n")),
              3, 12, "cluster.servers", "must be a list, not a map");
  ExpectError(
      ErrorOf(Base("model:\n  preset: gpt2-medium", "model: gpt2-medium")), 13, 8, "model",
      "must be a map, not a scalar (keys: preset, kind, recompute, recompute_layers, "
      "layers, hidden, heads, sequence, vocabulary, ffn_hidden, attention, causal, "
      "sparse_embedding, token_distribution, zipf_exponent, kv_heads, experts, top_k, "
      "capacity_factor, architecture, image_size, classes, "
      "fanouts, feature_dim, graph_vertices, graph_degree, graph, graph_exponent, graph_file)");
  ExpectError(ErrorOf(Base("  global_batch: 64", "  global_batch: [64]")), 16, 17,
              "training.global_batch", "must be an integer >= 1");
  ExpectError(ErrorOf(Base("name: base", "name: [a]")), 1, 7, "name",
              "must be a string, not a list");
}

TEST(LoadScenarioErrors, EmptyValueIsLocatedAtItsKey) {
  ExpectError(ErrorOf(Base("name: base", "name:")), 1, 1, "name", "must be a string, not empty");
}

TEST(LoadScenarioErrors, RequiredFieldMissingIsLocatedAtTheParentMap) {
  ExpectError(ErrorOf(Base("name: base\n", "")), 1, 1, "name", "required field missing");
  ExpectError(ErrorOf(Base("      gpus_per_server: 8\n", "")), 4, 7,
              "cluster.servers[0].gpus_per_server", "required field missing");
  ExpectError(ErrorOf(Base("      gpu: A100-SXM4-80GB\n", "")), 4, 7, "cluster.servers[0].gpu",
              "required field missing");
  ExpectError(ErrorOf(Base("bandwidth: \"300GB/s\", ", "")), 8, 17,
              "cluster.servers[0].nvswitch.bandwidth", "required field missing");
  ExpectError(ErrorOf(Base("  global_batch: 64\n  micro_batch: 4\n", "  seed: 1\n")), 16, 3,
              "training.global_batch", "required field missing");
  ExpectError(ErrorOf(Base("    kind: ddp\n", "")), 19, 5, "strategies[0].kind",
              "required field missing");
  ConfigError no_strategies = ErrorOf(Base("strategies:\n  - name: ddp\n    kind: ddp\n", ""));
  ExpectError(no_strategies, 1, 1, "strategies", "required field missing");
}

TEST(LoadScenarioErrors, ScenarioNameMustBePlain) {
  ExpectError(ErrorOf(Base("name: base", "name: my scenario")), 1, 7, "name",
              "must match [A-Za-z0-9_-][A-Za-z0-9._-]* and be at most 128 characters (it names "
              "output files)");
}

// --- Cluster ---------------------------------------------------------------------------------

TEST(LoadScenarioErrors, CountsBelowOne) {
  ConfigError count = ErrorOf(Base("count: 2", "count: 0"));
  ExpectError(count, 5, 14, "cluster.servers[0].count", "must be an integer >= 1");
  EXPECT_EQ(count.value(), "0");
  ExpectError(ErrorOf(Base("gpus_per_server: 8", "gpus_per_server: -1")), 7, 24,
              "cluster.servers[0].gpus_per_server", "must be an integer >= 1");
}

TEST(LoadScenarioErrors, NicCountMustDivideGpusPerServer) {
  ConfigError e = ErrorOf(Base("count: 8,", "count: 3,"));
  ExpectError(e, 9, 21, "cluster.servers[0].nics.count", "must divide gpus_per_server (8)");
  EXPECT_STREQ(e.what(),
               "t.yaml:9:21: cluster.servers[0].nics.count = \"3\": must divide gpus_per_server "
               "(8)");
}

TEST(LoadScenarioErrors, UnknownGpuListsTheKnownKinds) {
  ConfigError e = ErrorOf(Base("gpu: A100-SXM4-80GB", "gpu: A100"));
  ExpectError(e, 6, 12, "cluster.servers[0].gpu",
              "unknown GPU kind (known: A100-SXM4-80GB, A100-SXM4-40GB, H100-SXM5, H200, "
              "V100-SXM2, RTX3090, RTX4090, RTX2080Ti)");
  EXPECT_EQ(e.value(), "A100");
}

TEST(LoadScenarioErrors, ServerWithoutFabric) {
  ExpectError(ErrorOf(Base("      nvswitch: {bandwidth: \"300GB/s\", latency: \"1us\"}\n", "")), 4,
              7, "cluster.servers[0]", "a server with 8 GPUs needs nvswitch, nvlink or pcie");
}

TEST(LoadScenarioErrors, BandwidthAndLatencyValues) {
  ExpectError(ErrorOf(Base("bandwidth: \"300GB/s\"", "bandwidth: \"0GB/s\"")), 8, 29,
              "cluster.servers[0].nvswitch.bandwidth", "must be greater than 0");
  ExpectError(ErrorOf(Base("bandwidth: \"300GB/s\"", "bandwidth: \"-300GB/s\"")), 8, 29,
              "cluster.servers[0].nvswitch.bandwidth", "not a bandwidth: must not be negative");
  ExpectError(ErrorOf(Base("latency: \"1us\"}\n      nics", "latency: \"-1us\"}\n      nics")), 8,
              49, "cluster.servers[0].nvswitch.latency", "not a duration: must not be negative");
  ConfigError unit = ErrorOf(Base("bandwidth: \"300GB/s\"", "bandwidth: \"300GB\""));
  ExpectError(unit, 8, 29, "cluster.servers[0].nvswitch.bandwidth",
              "not a bandwidth: unknown unit \"GB\" (expected e.g. \"300GB/s\", \"200Gb/s\")");
  EXPECT_EQ(unit.value(), "300GB");
  ExpectError(ErrorOf(Base("bandwidth: \"200Gb/s\"", "bandwidth: 200")), 9, 35,
              "cluster.servers[0].nics.bandwidth",
              "not a bandwidth: missing unit (expected e.g. \"300GB/s\", \"200Gb/s\")");
  ExpectError(ErrorOf(Base("    latency: \"1us\"", "    latency: 1 fortnight")), 12, 14,
              "cluster.network.latency",
              "not a duration: unknown unit \"fortnight\" (expected e.g. \"2us\", \"1.5ms\")");
}

TEST(LoadScenarioErrors, DuplicateServerGroupName) {
  std::string yaml = Base("  network:", R"(    - name: dgx
      gpu: H100-SXM5
      gpus_per_server: 1
      nics: {bandwidth: "400Gb/s"}
  network:)");
  ExpectError(ErrorOf(yaml), 10, 13, "cluster.servers[1].name",
              "duplicate server group name (first at line 4)");
}

TEST(LoadScenarioErrors, MultiServerClusterNeedsNicsAndNetwork) {
  ExpectError(
      ErrorOf(Base("      nics: {count: 8, bandwidth: \"200Gb/s\", latency: \"1us\"}\n", "")), 4, 7,
      "cluster.servers[0].nics", "required field missing (a cluster of 2 servers needs it)");
  ExpectError(ErrorOf(Base("  network:\n    kind: single_switch\n    latency: \"1us\"\n", "")), 3,
              3, "cluster.network", "required field missing (a cluster of 2 servers needs it)");
  // One server needs neither.
  std::string one = Base("      count: 2\n", "");
  one = Replace(one, "      nics: {count: 8, bandwidth: \"200Gb/s\", latency: \"1us\"}\n", "");
  one = Replace(one, "  network:\n    kind: single_switch\n    latency: \"1us\"\n", "");
  Scenario s = LoadScenarioText(one, "t.yaml");
  EXPECT_EQ(s.cluster.NumServers(), 1);
  EXPECT_EQ(s.cluster.NumGpus(), 8);
}

TEST(LoadScenarioErrors, Network) {
  ExpectError(ErrorOf(Base("kind: single_switch", "kind: torus")), 11, 11, "cluster.network.kind",
              "must be one of: single_switch, leaf_spine, rail_optimized");
  ExpectError(ErrorOf(Base("kind: single_switch", "kind: leaf_spine")), 11, 5,
              "cluster.network.servers_per_leaf",
              "required field missing (kind leaf_spine needs it)");
  ExpectError(ErrorOf(Base("kind: single_switch", "kind: single_switch\n    servers_per_leaf: 2")),
              12, 23, "cluster.network.servers_per_leaf",
              "only allowed with kind leaf_spine or rail_optimized");
  ExpectError(ErrorOf(Base("kind: single_switch", "kind: rail_optimized\n    servers_per_leaf: 2")),
              12, 23, "cluster.network.servers_per_leaf",
              "not allowed with kind rail_optimized (NIC k of every server is on leaf k)");
  ExpectError(ErrorOf(Base("kind: single_switch", "kind: leaf_spine\n    servers_per_leaf: 0")), 12,
              23, "cluster.network.servers_per_leaf", "must be an integer >= 1");
  ExpectError(ErrorOf(Base("kind: single_switch",
                           "kind: leaf_spine\n    servers_per_leaf: 1\n    oversubscription: 1:2")),
              13, 23, "cluster.network.oversubscription",
              "must be a number in [1, 1000] or a ratio like \"2:1\"");
  ExpectError(ErrorOf(Base("kind: single_switch",
                           "kind: leaf_spine\n    servers_per_leaf: 1\n    oversubscription: 0.5")),
              13, 23, "cluster.network.oversubscription",
              "must be a number in [1, 1000] or a ratio like \"2:1\"");
}

TEST(LoadScenarioErrors, NvLinkPairs) {
  ExpectError(ErrorOf(Box(R"(nvlink: {pairs: [[0, 1], [0, 4]], bandwidth: "56.25GB/s"})")), 7, 36,
              "cluster.servers[0].nvlink.pairs[1][1]", "must be an integer in [0, 3]");
  ExpectError(ErrorOf(Box(R"(nvlink: {pairs: [[0, 1], [2, 2]], bandwidth: "56.25GB/s"})")), 7, 32,
              "cluster.servers[0].nvlink.pairs[1]", "connects GPU 2 to itself");
  ExpectError(ErrorOf(Box(R"(nvlink: {pairs: [[0, 1], [1, 0]], bandwidth: "56.25GB/s"})")), 7, 32,
              "cluster.servers[0].nvlink.pairs[1]", "duplicate pair (first at line 7)");
  ExpectError(ErrorOf(Box(R"(nvlink: {pairs: [[0, 1, 2]], bandwidth: "56.25GB/s"})")), 7, 24,
              "cluster.servers[0].nvlink.pairs[0]",
              "must be a pair [a, b] of GPU indices in the server");
  ExpectError(ErrorOf(Box(R"(nvlink: {pairs: some, bandwidth: "56.25GB/s"})")), 7, 23,
              "cluster.servers[0].nvlink.pairs", "must be \"all\" or a list of [a, b] pairs");
}

TEST(LoadScenarioErrors, PartialNvLinkNeedsPcie) {
  const std::string nvlink = R"(nvlink: {pairs: [[0, 1], [2, 3]], bandwidth: "56.25GB/s"})";
  ExpectError(ErrorOf(Box(nvlink)), 7, 23, "cluster.servers[0].nvlink.pairs",
              "leaves GPUs 0 and 2 without a link; list every pair, write \"all\", or add pcie "
              "to carry the traffic between them");
  Scenario s = LoadScenarioText(
      Box(nvlink + "\n      pcie: {gpus_per_switch: 4, bandwidth: \"31.5GB/s\"}"), "t.yaml");
  EXPECT_EQ(s.cluster.groups[0].nvlink->pairs.size(), 2u);
  EXPECT_EQ(s.cluster.groups[0].pcie->gpus_per_switch, 4);
  EXPECT_EQ(s.cluster.groups[0].pcie->sockets, 1);
}

TEST(LoadScenarioErrors, PcieTree) {
  ExpectError(ErrorOf(Box(R"(pcie: {gpus_per_switch: 3, bandwidth: "31.5GB/s"})")), 7, 31,
              "cluster.servers[0].pcie.gpus_per_switch", "must divide gpus_per_server (4)");
  ExpectError(ErrorOf(Box(R"(pcie: {gpus_per_switch: 2, sockets: 3, bandwidth: "31.5GB/s"})")), 7,
              43, "cluster.servers[0].pcie.sockets",
              "must divide the number of PCIe switches (2 = gpus_per_server / gpus_per_switch)");
  ExpectError(ErrorOf(Box(R"(pcie: {gpus_per_switch: 2, sockets: 2, bandwidth: "31.5GB/s"})")), 7,
              13, "cluster.servers[0].pcie.socket_link", "required field missing (sockets is 2)");
  ExpectError(ErrorOf(Box(R"(pcie: {gpus_per_switch: 0, bandwidth: "31.5GB/s"})")), 7, 31,
              "cluster.servers[0].pcie.gpus_per_switch", "must be an integer >= 1");
}

TEST(LoadScenarioErrors, CustomGpus) {
  const std::string box = Box(R"(pcie: {bandwidth: "31.5GB/s"})");
  const std::string gpus = R"(  gpus:
    - name: MyGPU
      peak: {fp32: "20TFLOPS", fp64: "10TFLOPS"}
      memory: "48GB"
      memory_bandwidth: "1TB/s"
  servers:)";
  ExpectError(ErrorOf(Replace(box, "  servers:", gpus)), 5, 32, "cluster.gpus[0].peak.fp64",
              "unknown dtype (known: fp32, tf32, fp16, bf16, fp8, int8)");
  ExpectError(ErrorOf(Replace(box, "  servers:", Replace(gpus, "name: MyGPU", "name: H200"))), 4,
              13, "cluster.gpus[0].name",
              "is a built-in GPU kind; give the custom GPU another name");
  const std::string good = Replace(gpus, ", fp64: \"10TFLOPS\"", "");
  ExpectError(ErrorOf(Replace(Replace(box, "  servers:", good), "gpu: RTX3090", "gpu: MyGPU2")), 10,
              12, "cluster.servers[0].gpu",
              "unknown GPU kind (known: A100-SXM4-80GB, A100-SXM4-40GB, H100-SXM5, H200, "
              "V100-SXM2, RTX3090, RTX4090, RTX2080Ti, MyGPU)");
  const std::string twice = good + "\n" + Replace(good, "  gpus:\n", "");
  ExpectError(ErrorOf(Replace(box, "  servers:", Replace(twice, "  servers:\n", ""))), 8, 13,
              "cluster.gpus[1].name", "duplicate GPU name (first at line 4)");
  ExpectError(ErrorOf(Replace(box, "  servers:", Replace(good, "\"48GB\"", "0"))), 6, 15,
              "cluster.gpus[0].memory", "must be greater than 0");
  // Defined but unused: not among the cluster's kinds.
  Scenario s = LoadScenarioText(Replace(box, "  servers:", good), "t.yaml");
  ASSERT_EQ(s.cluster.gpu_kinds.size(), 1u);
  EXPECT_EQ(s.cluster.gpu_kinds[0].name, "RTX3090");
}

// --- Model, training, simulation, strategies --------------------------------------------------

TEST(LoadScenarioErrors, Model) {
  ExpectError(ErrorOf(Base("preset: gpt2-medium", "preset: gpt4")), 14, 11, "model.preset",
              "unknown preset (known: gpt2-small, gpt2-medium, gpt2-large, gpt2-xl, gpt3-125m, "
              "gpt3-350m, gpt3-760m, gpt3-1.3b, gpt3-2.7b, gpt3-6.7b, gpt3-13b, gpt3-175b, "
              "bert-base, bert-large, llama2-7b, llama2-13b, llama2-70b, llama3-8b, llama3-70b, "
              "llama3-405b, mixtral-8x7b, resnet50, vgg16, graphsage-reddit, graphsage-products)");
  ExpectError(ErrorOf(Base("preset: gpt2-medium", "preset: gpt2-medium\n  heads: 15")), 15, 10,
              "model.heads", "must divide hidden (1024)");
  ExpectError(ErrorOf(Base("preset: gpt2-medium", "preset: gpt2-medium\n  hidden: 1000")), 15, 11,
              "model.hidden", "must be a multiple of heads (16)");
  ExpectError(ErrorOf(Base("preset: gpt2-medium", "kind: bart\n  preset: gpt2-medium")), 14, 9,
              "model.kind",
              "unknown model kind (known: gpt, bert, llama, moe, resnet50, vgg16, graphsage)");
  ExpectError(ErrorOf(Base("preset: gpt2-medium", "kind: bert\n  preset: gpt2-medium")), 15, 11,
              "model.preset", "is a gpt preset, not bert (bert presets: bert-base, bert-large)");
  ExpectError(ErrorOf(Base("preset: gpt2-medium", "layers: 2\n  hidden: 64\n  heads: 4")), 14, 3,
              "model.sequence", "required field missing (or name a preset)");
  ExpectError(ErrorOf(Base("preset: gpt2-medium", "preset: gpt2-medium\n  layers: 0")), 15, 11,
              "model.layers", "must be an integer >= 1");
}

TEST(LoadScenarioErrors, Fp8NeedsFp8TensorCoresAndTransformerLayers) {
  // A100 has no FP8 units: the error is at training.precision and names the GPU kind and where
  // the cluster uses it.
  const ConfigError a100 = ErrorOf(Base("micro_batch: 4", "micro_batch: 4\n  precision: fp8"));
  ExpectError(a100, 18, 14, "training.precision",
              "FP8 GEMMs need FP8 tensor cores; GPU kind A100-SXM4-80GB "
              "(cluster.servers[0].gpu at t.yaml:6:12) has none");
  EXPECT_EQ(std::string(a100.what()),
            "t.yaml:18:14: training.precision = \"fp8\": FP8 GEMMs need FP8 tensor cores; GPU "
            "kind A100-SXM4-80GB (cluster.servers[0].gpu at t.yaml:6:12) has none");
  // H100 has them; the model must be a transformer.
  const std::string h100 = Replace(Base("micro_batch: 4", "micro_batch: 4\n  precision: fp8"),
                                   "A100-SXM4-80GB", "H100-SXM5");
  EXPECT_EQ(LoadScenarioText(h100, "t.yaml").training.precision, DType::kFP8);
  ExpectError(ErrorOf(Replace(h100, "preset: gpt2-medium", "preset: resnet50")), 18, 14,
              "training.precision",
              "FP8 training runs the linear layers of transformer layers in FP8, as Transformer "
              "Engine does: only for model kinds gpt, bert, llama, moe (the model is resnet50)");
}

TEST(LoadScenario, MixtralPresetAndLlamaStyleMoe) {
  const Scenario s =
      LoadScenarioText(Base("preset: gpt2-medium", "preset: mixtral-8x7b"), "t.yaml");
  EXPECT_EQ(s.model.kind, "moe");
  EXPECT_EQ(s.model.architecture, "llama");
  EXPECT_EQ(s.model.experts, 8);
  EXPECT_EQ(s.model.top_k, 2);
  EXPECT_EQ(s.model.kv_heads, 8);
  EXPECT_EQ(s.model.ffn_hidden, 14336);
  // A GPT preset borrowed by kind moe stays GPT-style.
  const Scenario g = LoadScenarioText(
      Base("preset: gpt2-medium", "kind: moe\n  preset: gpt2-medium\n  experts: 4"), "t.yaml");
  EXPECT_EQ(g.model.architecture, "gpt");
  EXPECT_EQ(g.model.top_k, 1);
  const std::string moe = "kind: moe\n  preset: gpt2-medium\n  experts: 4\n  ";
  ExpectError(ErrorOf(Base("preset: gpt2-medium", moe + "architecture: mamba")), 17, 17,
              "model.architecture", "must be one of: gpt, llama");
  ExpectError(ErrorOf(Base("preset: gpt2-medium", moe + "kv_heads: 4")), 17, 13, "model.kv_heads",
              "grouped-query attention needs architecture: llama");
  ExpectError(ErrorOf(Base("preset: gpt2-medium", moe + "architecture: llama\n  kv_heads: 3")), 18,
              13, "model.kv_heads", "must divide heads (16)");
  ExpectError(ErrorOf(Base("preset: gpt2-medium", "preset: mixtral-8x7b\n  experts: 1")), 15, 12,
              "model.experts", "must be >= top_k (2)");
}

TEST(LoadScenarioErrors, Training) {
  ExpectError(ErrorOf(Base("micro_batch: 4", "micro_batch: 5")), 17, 16, "training.micro_batch",
              "must divide global_batch (64)");
  ExpectError(ErrorOf(Base("global_batch: 64", "global_batch: 0")), 16, 17, "training.global_batch",
              "must be an integer >= 1");
  ExpectError(ErrorOf(Base("micro_batch: 4", "micro_batch: 4\n  precision: fp64")), 18, 14,
              "training.precision", "unknown precision (known: fp32, tf32, fp16, bf16, fp8, int8)");
  ExpectError(ErrorOf(Base("micro_batch: 4", "micro_batch: 4\n  iterations: {warmup: -1}")), 18, 24,
              "training.iterations.warmup", "must be an integer in [0, 1000000]");
  ExpectError(ErrorOf(Base("micro_batch: 4", "micro_batch: 4\n  iterations: {measured: 0}")), 18,
              26, "training.iterations.measured", "must be an integer in [1, 1000000]");
  ExpectError(ErrorOf(Base("micro_batch: 4", "micro_batch: 4\n  seed: -3")), 18, 9, "training.seed",
              "must be an integer in [0, 2^64 - 1]");
  ExpectError(ErrorOf(Base("micro_batch: 4", "micro_batch: 4\n  seed: 18446744073709551616")), 18,
              9, "training.seed", "must be an integer in [0, 2^64 - 1]");
  Scenario s = LoadScenarioText(
      Base("micro_batch: 4", "micro_batch: 4\n  seed: 18446744073709551615"), "t.yaml");
  EXPECT_EQ(s.training.seed, 18446744073709551615u);
}

TEST(LoadScenarioErrors, EfficiencyOutsideZeroOne) {
  const std::string sim = "simulation: {compute_efficiency: EFF}\nstrategies:";
  ExpectError(ErrorOf(Base("strategies:", Replace(sim, "EFF", "0"))), 18, 34,
              "simulation.compute_efficiency",
              "must be a number in [0.01, 1] (a fraction of the peak)");
  ExpectError(ErrorOf(Base("strategies:", Replace(sim, "EFF", "1.5"))), 18, 34,
              "simulation.compute_efficiency",
              "must be a number in [0.01, 1] (a fraction of the peak)");
  ExpectError(ErrorOf(Base("strategies:", "simulation: {memory_efficiency: high}\nstrategies:")),
              18, 33, "simulation.memory_efficiency",
              "must be a number in [0.01, 1] (a fraction of the peak)");
  ExpectError(ErrorOf(Base("strategies:", "simulation: {kernel_launch: \"-4us\"}\nstrategies:")),
              18, 29, "simulation.kernel_launch", "not a duration: must not be negative");
}

TEST(LoadScenario, SimulationFidelityAndCollectives) {
  const Scenario s =
      LoadScenarioText(Base("strategies:",
                            "simulation:\n  fidelity: stream\n  collectives:\n"
                            "    algorithms: {all_reduce: hierarchical, all_to_all: pairwise}\n"
                            "    protocol: ll128\n    channels: 4\nstrategies:"),
                       "t.yaml");
  EXPECT_EQ(s.simulation.fidelity, Fidelity::kStream);
  EXPECT_EQ(s.simulation.collectives.algorithm.at(CollectiveKind::kAllReduce), "hierarchical");
  EXPECT_EQ(s.simulation.collectives.algorithm.at(CollectiveKind::kAllToAll), "pairwise");
  EXPECT_EQ(s.simulation.collectives.algorithm.count(CollectiveKind::kBroadcast), 0u);
  EXPECT_EQ(s.simulation.collectives.protocol, "ll128");
  EXPECT_EQ(s.simulation.collectives.channels, 4);
  EXPECT_TRUE(s.simulation.fold);
  EXPECT_TRUE(s.simulation.fuse);
  const Scenario off = LoadScenarioText(
      Base("strategies:", "simulation: {fold: off, fuse: off}\nstrategies:"), "t.yaml");
  EXPECT_FALSE(off.simulation.fold);
  EXPECT_FALSE(off.simulation.fuse);
  EXPECT_EQ(off.simulation.max_tasks, 0);
  EXPECT_EQ(
      LoadScenarioText(Base("strategies:", "simulation: {max_tasks: 5000}\nstrategies:"), "t.yaml")
          .simulation.max_tasks,
      5000);
  EXPECT_EQ(
      LoadScenarioText(Base("strategies:", "simulation: {max_tasks: auto}\nstrategies:"), "t.yaml")
          .simulation.max_tasks,
      0);
  const Scenario rail = LoadScenarioText(
      Base("kind: single_switch", "kind: rail_optimized\n    oversubscription: 2"), "t.yaml");
  EXPECT_EQ(rail.cluster.network.kind, NetworkKind::kRailOptimized);
  EXPECT_EQ(rail.cluster.network.oversubscription, 2);
}

TEST(LoadScenarioErrors, SimulationFidelityAndCollectives) {
  ExpectError(ErrorOf(Base("strategies:", "simulation: {max_tasks: 0}\nstrategies:")), 18, 25,
              "simulation.max_tasks", "must be auto or an integer in [1, 2147483647]");
  ExpectError(ErrorOf(Base("strategies:", "simulation: {max_tasks: lots}\nstrategies:")), 18, 25,
              "simulation.max_tasks", "must be auto or an integer in [1, 2147483647]");
  ExpectError(ErrorOf(Base("strategies:", "simulation: {fold: on}\nstrategies:")), 18, 20,
              "simulation.fold", "must be one of: auto, off");
  ExpectError(ErrorOf(Base("strategies:", "simulation: {fuse: yes}\nstrategies:")), 18, 20,
              "simulation.fuse", "must be one of: auto, off");
  ExpectError(ErrorOf(Base("strategies:", "simulation: {fidelity: exact}\nstrategies:")), 18, 24,
              "simulation.fidelity", "must be one of: step, stream, analytic");
  ExpectError(ErrorOf(Base("strategies:",
                           "simulation: {collectives: {algorithms: {broadcast: hierarchical}}}\n"
                           "strategies:")),
              18, 52, "simulation.collectives.algorithms.broadcast",
              "must be one of: auto, ring, tree");
  ExpectError(ErrorOf(Base("strategies:",
                           "simulation: {collectives: {algorithms: {allreduce: ring}}}\n"
                           "strategies:")),
              18, 41, "simulation.collectives.algorithms.allreduce",
              "unknown key (known: all_reduce, reduce_scatter, all_gather, broadcast, reduce, "
              "all_to_all, all_to_all_v, gather, scatter)");
  ExpectError(
      ErrorOf(Base("strategies:", "simulation: {collectives: {protocol: fast}}\nstrategies:")), 18,
      38, "simulation.collectives.protocol", "must be one of: auto, ll, ll128, simple");
  ExpectError(ErrorOf(Base("strategies:", "simulation: {collectives: {channels: 0}}\nstrategies:")),
              18, 38, "simulation.collectives.channels", "must be an integer in [1, 64]");
}

TEST(LoadScenarioErrors, Strategies) {
  ExpectError(ErrorOf(Base("strategies:\n  - name: ddp\n    kind: ddp\n", "strategies: []\n")), 18,
              13, "strategies", "must not be empty");
  ExpectError(ErrorOf(std::string(kBase) + "  - name: ddp\n    kind: fsdp\n"), 21, 11,
              "strategies[1].name", "duplicate strategy name (first at line 19)");
  ExpectError(ErrorOf(Base("  - name: ddp", "  - name: d/dp")), 19, 11, "strategies[0].name",
              "must match [A-Za-z0-9_-][A-Za-z0-9._-]* and be at most 128 characters (it names "
              "output files)");
  ExpectError(ErrorOf(std::string(kBase) + "    options: {overlap: [1, 2]}\n"), 21, 24,
              "strategies[0].options.overlap",
              "must be a scalar (a number, a string, true or false), not a list");
  ExpectError(ErrorOf(std::string(kBase) + "    options: [overlap]\n"), 21, 14,
              "strategies[0].options", "must be a map, not a list");
}

TEST(LoadScenario, StrategyOverridesHowTheModelIsTrained) {
  const Scenario s = LoadScenarioText(std::string(kBase) +
                                          "    model: {recompute: selective, attention: unfused}\n"
                                          "    training: {precision: fp16, micro_batch: 8}\n"
                                          "  - {name: plain, kind: ddp}\n",
                                      "t.yaml");
  ASSERT_EQ(s.strategies.size(), 2u);
  const StrategySpec& own = s.strategies[0];
  EXPECT_EQ(own.own.recompute, Recompute::kSelective);
  EXPECT_EQ(own.own.recompute_layers, 0);
  EXPECT_EQ(own.own.attention, Attention::kUnfused);
  EXPECT_EQ(own.own.precision, DType::kFP16);
  EXPECT_EQ(own.own.micro_batch, 8);
  EXPECT_TRUE(s.strategies[1].own.empty());

  const Scenario mine = ScenarioFor(s, own);
  EXPECT_EQ(mine.training.precision, DType::kFP16);
  EXPECT_EQ(mine.model.recompute, Recompute::kSelective);
  EXPECT_EQ(ScenarioFor(s, s.strategies[1]).training.precision, DType::kBF16);
  EXPECT_EQ(DescribeOverrides(s, own),
            (std::vector<std::string>{"model.attention = unfused (the scenario's: flash)",
                                      "model.recompute = selective (the scenario's: none)",
                                      "training.micro_batch = 8 (the scenario's: 4)",
                                      "training.precision = fp16 (the scenario's: bf16)"}));
  EXPECT_TRUE(DescribeOverrides(s, s.strategies[1]).empty());
  // Only the keys the strategy gave: a run that shortens the scenario (sizing plans one
  // iteration) keeps its change.
  Scenario shorter = s;
  shorter.training.measured_iterations = 1;
  shorter.model.layers = 2;
  const Scenario mine_shorter = ScenarioFor(shorter, own);
  EXPECT_EQ(mine_shorter.training.measured_iterations, 1);
  EXPECT_EQ(mine_shorter.model.layers, 2);
  EXPECT_EQ(mine_shorter.training.micro_batch, 8);
}

TEST(LoadScenarioErrors, StrategyOverrides) {
  ExpectError(ErrorOf(std::string(kBase) + "    training: {global_batch: 32}\n"), 21, 16,
              "strategies[0].training.global_batch",
              "a strategy may change only how the batch is computed: micro_batch, precision (the "
              "global batch, iterations and seed are the scenario's, so that strategies compare "
              "on the same training)");
  ExpectError(ErrorOf(std::string(kBase) + "    model: {preset: gpt2-large}\n"), 21, 13,
              "strategies[0].model.preset",
              "a strategy may change only how the model is trained: attention, recompute, "
              "recompute_layers (the model itself is the scenario's)");
  ExpectError(ErrorOf(std::string(kBase) + "    model: {attention: fast}\n"), 21, 24,
              "strategies[0].model.attention", "must be one of: flash, unfused");
  ExpectError(ErrorOf(Base("preset: gpt2-medium", "preset: resnet50") +
                      "    model: {attention: unfused}\n"),
              21, 24, "strategies[0].model.attention",
              "only for kinds gpt, bert, llama, moe (this model is resnet50)");
  ExpectError(ErrorOf(std::string(kBase) + "    training: {micro_batch: 5}\n"), 21, 29,
              "strategies[0].training.micro_batch", "must divide global_batch (64)");
  ExpectError(ErrorOf(std::string(kBase) + "    training: {precision: fp7}\n"), 21, 27,
              "strategies[0].training.precision",
              "unknown precision (known: fp32, tf32, fp16, bf16, fp8, int8)");
  // A strategy's own FP8 is checked as the scenario's is.
  ExpectError(ErrorOf(std::string(kBase) + "    training: {precision: fp8}\n"), 21, 27,
              "strategies[0].training.precision",
              "FP8 GEMMs need FP8 tensor cores; GPU kind A100-SXM4-80GB (cluster.servers[0].gpu "
              "at t.yaml:6:12) has none");
  ExpectError(ErrorOf(std::string(kBase) + "    model: {recompute: some}\n"), 21, 24,
              "strategies[0].model.recompute", "must be one of: none, selective, full");
  ExpectError(ErrorOf(std::string(kBase) + "    training: [fp16]\n"), 21, 15,
              "strategies[0].training", "must be a map, not a list");
}

}  // namespace
}  // namespace stratasim
