// Oases (strategies/tensor/oases.h) as a graph: its collectives, their groups and streams, what
// its recomputation keeps, and its located errors.
#include "strategies/tensor/oases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"
#include "strategies/tensor/megatron.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

Scenario Small(int gpus, int global_batch, int micro_batch) {
  return testing::TinyGptScenario({gpus, 1, global_batch, micro_batch, 4, 8});
}

Plan Oases(const Scenario& s, std::map<std::string, std::string> options) {
  return PlanStrategy(s, testing::SpecOf("o", "oases", options));
}

// Rank 0's collectives of micro-batch 0 whose name has `part`, by kind: count and bytes.
std::map<CollectiveKind, std::pair<int, double>> Traffic(const Plan& p, const std::string& part) {
  std::map<CollectiveKind, std::pair<int, double>> out;
  for (const Collective& c : p.graph.collectives()) {
    if (std::find(c.ranks.begin(), c.ranks.end(), 0) == c.ranks.end()) continue;
    const std::string name = p.graph.task(c.members[0]).name.str();
    if (name.find("mb0/") == std::string::npos || name.find(part) == std::string::npos) continue;
    out[c.kind].first++;
    out[c.kind].second += c.bytes;
  }
  return out;
}

// Rank 0's activation bytes allocated in micro-batch 0's forward for names with `part`.
double SavedBytes(const Plan& p, const std::string& part) {
  double bytes = 0;
  for (const Task& t : p.graph.tasks()) {
    if (t.rank != 0 || t.kind != TaskKind::kMemory || t.memory_delta_bytes <= 0) continue;
    const std::string name = t.name.str();
    if (name.find("mb0/") != std::string::npos && name.find(part) != std::string::npos &&
        name.find("/activations") != std::string::npos) {
      bytes += t.memory_delta_bytes;
    }
  }
  return bytes;
}

const double kBshBytes = 2.0 * 128 * 256 * 2;  // b = 2, s = 128, h = 256, BF16

TEST(Oases, SubBatchAllReducesRunOnTheirOwnStream) {
  const Plan p = Oases(Small(4, 2, 2), {{"tensor", "4"}});
  const auto layer = Traffic(p, "/layer1.");
  ASSERT_EQ(layer.size(), 1u);
  // 2 forward and 2 backward all-reduces per sub-batch, each of half the micro-batch.
  EXPECT_EQ(layer.at(CollectiveKind::kAllReduce).first, 8);
  EXPECT_DOUBLE_EQ(layer.at(CollectiveKind::kAllReduce).second, 4 * kBshBytes);
  int on_subpipe = 0;
  for (const Collective& c : p.graph.collectives()) {
    const Task& member = p.graph.task(c.members[0]);
    if (member.name.str().find("/layer1.") == std::string::npos) continue;
    EXPECT_EQ(p.graph.streams()[member.stream], "tp_subpipe");
    ++on_subpipe;
  }
  EXPECT_EQ(on_subpipe, 8);
}

TEST(Oases, RecomputeIssuesFourTensorParallelAllReducesPerLayerNotSix) {
  Scenario s = Small(4, 2, 2);
  const Plan oases = Oases(s, {{"tensor", "4"}, {"recompute", "true"}});
  s.model.recompute = Recompute::kFull;
  const Plan megatron = PlanStrategy(s, testing::SpecOf("tp", "tensor", {{"degree", "4"}}));
  const auto o = Traffic(oases, "/layer1.");
  const auto m = Traffic(megatron, "/layer1/");
  // Oases: 4 all-reduces of b s h per layer (in two sub-batches each), none in recomputation.
  EXPECT_EQ(o.at(CollectiveKind::kAllReduce).first, 2 * 4);
  EXPECT_DOUBLE_EQ(o.at(CollectiveKind::kAllReduce).second, 4 * kBshBytes);
  // Megatron with full recomputation: the forward's 2 run again.
  EXPECT_EQ(m.at(CollectiveKind::kAllReduce).first, 6);
  EXPECT_DOUBLE_EQ(m.at(CollectiveKind::kAllReduce).second, 6 * kBshBytes);
  for (const Task& t : oases.graph.tasks()) {
    if (t.kind == TaskKind::kCollective) {
      EXPECT_NE(t.phase, Phase::kRecompute) << t.name.str();
    }
  }
  // The recomputation re-runs local kernels, not the row-parallel GEMMs whose output is kept.
  std::set<std::string> recomputed;
  for (const Task& t : oases.graph.tasks()) {
    if (t.rank == 0 && t.phase == Phase::kRecompute) {
      const std::string name = t.name.str();
      if (name.find("it0/mb0/layer1.") == 0) recomputed.insert(name.substr(8));
    }
  }
  EXPECT_EQ(recomputed.count("layer1.attn/qkv/recompute/half0"), 1u);
  EXPECT_EQ(recomputed.count("layer1.attn/proj/recompute/half0"), 0u);
  EXPECT_EQ(recomputed.count("layer1.mlp/mlp_down/recompute/half1"), 0u);
}

TEST(Oases, RecomputeKeepsEachSubLayersInputAndAllReducedOutput) {
  Scenario s = Small(4, 2, 2);
  const Plan oases = Oases(s, {{"tensor", "4"}, {"recompute", "true"}});
  const Plan none = Oases(s, {{"tensor", "4"}});
  s.model.recompute = Recompute::kFull;
  const Plan megatron = PlanStrategy(s, testing::SpecOf("tp", "tensor", {{"degree", "4"}}));
  // Megatron keeps the layer's input; Oases the input of each of its two sub-layers and each
  // one's all-reduced output.
  EXPECT_DOUBLE_EQ(SavedBytes(megatron, "/layer1/"), kBshBytes);
  EXPECT_DOUBLE_EQ(SavedBytes(oases, "/layer1."), 4 * kBshBytes);
  EXPECT_GT(SavedBytes(none, "/layer1."), 2 * SavedBytes(oases, "/layer1."));
}

TEST(Oases, CutpointReshardsAtTheBoundaryAndReducesGradientsPerRegion) {
  // 8 GPUs: layers 0-1 at t = 2 (d = 4), layers 2-3 at t = 4 (d = 2).
  const Scenario s = Small(8, 8, 4);
  const Plan p = Oases(s, {{"first_tensor", "2"}, {"tensor", "4"}, {"cutpoint", "2"}});
  std::map<std::string, std::vector<std::vector<int>>> groups;  // by name, of iteration 0 / mb0
  for (const Collective& c : p.graph.collectives()) {
    const std::string name = p.graph.task(c.members[0]).name.str();
    if (name.find("reshard") != std::string::npos ||
        name.find("allreduce/run") != std::string::npos) {
      groups[name].push_back(c.ranks);
    }
  }
  // Forward: the degree grows, the trans groups (ranks at one position of the two t = 2 groups
  // of a t = 4 group) all-gather the sub-batches; nothing in the backward.
  const auto& gather = groups.at("it0/mb0/layer2.attn/reshard_all_gather");
  EXPECT_EQ(gather, (std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(groups.count("it0/mb0/layer2.attn/reshard_grad_all_gather"), 0u);
  for (const Collective& c : p.graph.collectives()) {
    const Task& t = p.graph.task(c.members[0]);
    if (t.name.str() == "it0/mb0/layer2.attn/reshard_all_gather") {
      EXPECT_DOUBLE_EQ(c.bytes, 4.0 * 128 * 256 * 2);  // the t = 4 micro-batch: 4 samples
      EXPECT_EQ(t.phase, Phase::kForward);
    }
  }
  // One gradient all-reduce per region, over that region's data-parallel groups.
  EXPECT_EQ(groups.at("it0/allreduce/run0"),
            (std::vector<std::vector<int>>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(groups.at("it0/allreduce/run1"),
            (std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // The other way round: the forward slices, the backward gathers the gradient.
  const Plan back = Oases(s, {{"first_tensor", "4"}, {"tensor", "2"}, {"cutpoint", "2"}});
  int grad_gathers = 0, gathers = 0;
  for (const Collective& c : back.graph.collectives()) {
    const std::string name = back.graph.task(c.members[0]).name.str();
    if (name == "it0/mb0/layer2.attn/reshard_grad_all_gather") ++grad_gathers;
    if (name == "it0/mb0/layer2.attn/reshard_all_gather") ++gathers;
  }
  EXPECT_EQ(grad_gathers, 4);
  EXPECT_EQ(gathers, 0);
}

TEST(Oases, SmInterferenceChargesTheKernelsBesideAnAllReduce) {
  const Scenario s = Small(4, 2, 2);
  auto charged = [&](const std::string& f) {
    const Plan p = Oases(s, {{"tensor", "4"}, {"sm_interference", f}});
    int n = 0;
    for (const Task& t : p.graph.tasks()) {
      if (t.category != "sm_interference") continue;
      ++n;
      EXPECT_EQ(t.phase, Phase::kOther);  // no model FLOPs
      EXPECT_EQ(p.graph.task(t.deps.at(0)).kind, TaskKind::kCompute);
    }
    return n;
  };
  EXPECT_EQ(charged("0"), 0);
  EXPECT_GT(charged("0.2"), 0);
  // Half 1 of the attention runs beside half 0's all-reduce: its QKV GEMM is charged, half 0's
  // first kernels of the first layer are not.
  const Plan p = Oases(s, {{"tensor", "4"}, {"sm_interference", "0.2"}});
  std::set<std::string> names;
  for (const Task& t : p.graph.tasks()) {
    if (t.rank == 0 && t.category == "sm_interference") names.insert(t.name.str());
  }
  EXPECT_EQ(names.count("it0/mb0/layer0.attn/qkv/fwd/half1/sm_interference"), 1u);
  EXPECT_EQ(names.count("it0/mb0/layer0.attn/qkv/fwd/half0/sm_interference"), 0u);
  EXPECT_DOUBLE_EQ(OasesSmInterference(s), kDefaultSmInterference);
}

TEST(Oases, CutpointShapeAndShapeErrors) {
  const OasesShape shape = OasesCutpointShape(3, 2, 4, 1, true);
  EXPECT_EQ(shape.sublayer_tensor, (std::vector<int>{2, 2, 4, 4, 4, 4}));
  const Scenario s = Small(8, 8, 4);
  OasesShape bad;
  bad.sublayer_tensor = {4, 4};
  EXPECT_EQ(OasesShapeError(s, bad),
            "needs one tensor degree per sub-layer: 8 (2 x 4 layers), not 2");
  bad.sublayer_tensor = {2, 2, 2, 8, 8, 8, 8, 8};
  EXPECT_EQ(OasesShapeError(testing::TinyGptScenario({8, 1, 8, 8, 4, 4}), bad),
            "sub-layer 3 (layer1.mlp): tensor degree t=8 must divide the model's attention "
            "heads (4)");
  bad.sublayer_tensor = {1, 1, 4, 4, 4, 4, 4, 4};
  EXPECT_EQ(OasesShapeError(s, bad),
            "sub-layer 0 (layer0.attn): tensor degree t=1: its micro-batches of "
            "training.micro_batch x t / 4 (the largest degree) = 1 samples must be a whole even "
            "number, to split into two sub-batches");
  try {
    LowerOases(s, bad);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("oases: sub-layer 0 (layer0.attn)", 0), 0u) << e.what();
  }
  bad.sublayer_tensor = {2, 2, 4, 4, 2, 2, 4, 4};  // the planner's degrees may alternate
  EXPECT_EQ(OasesShapeError(s, bad), "");
}

TEST(Oases, SmInterferenceComesFromTheCalibrationFileWhenItListsTheGpu) {
  Scenario s = Small(4, 2, 2);
  s.simulation.calibration = LoadCalibrationText(
      "format: stratasim-calibration\nversion: 1\ngpus:\n"
      "  - {gpu: A100-SXM4-80GB, sm_interference: 0.25}\n",
      "c.yaml");
  EXPECT_DOUBLE_EQ(OasesSmInterference(s), 0.25);
  s.simulation.calibration = LoadCalibrationText(
      "format: stratasim-calibration\nversion: 1\ngpus:\n  - {gpu: H100-SXM5}\n", "c.yaml");
  EXPECT_DOUBLE_EQ(OasesSmInterference(s), kDefaultSmInterference);
  try {
    LoadCalibrationText(
        "format: stratasim-calibration\nversion: 1\ngpus:\n"
        "  - {gpu: A100-SXM4-80GB, sm_interference: 2}\n",
        "c.yaml");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("gpus[0].sm_interference"), std::string::npos) << e.what();
  }
}

std::string ErrorOf(const Scenario& s, std::map<std::string, std::string> options) {
  return testing::PlanErrorOf(s, testing::SpecOf("o", "oases", options));
}

TEST(Oases, LocatedErrors) {
  const Scenario s = Small(8, 8, 4);
  EXPECT_EQ(ErrorOf(s, {{"tensor", "3"}}),
            "s.yaml:9:5: strategies[0].options.tensor = \"3\": tensor t=3 must divide the GPU "
            "count (8)");
  EXPECT_EQ(ErrorOf(testing::TinyGptScenario({8, 1, 8, 4, 4, 4}), {{"tensor", "8"}}),
            "s.yaml:9:5: strategies[0].options.tensor = \"8\": tensor degree t=8 must divide "
            "the model's attention heads (4)");
  EXPECT_EQ(ErrorOf(s, {{"first_tensor", "3"}, {"cutpoint", "1"}}),
            "s.yaml:9:5: strategies[0].options.first_tensor = \"3\": first_tensor t=3 must "
            "divide the GPU count (8)");
  EXPECT_EQ(ErrorOf(s, {{"cutpoint", "5"}}),
            "s.yaml:9:5: strategies[0].options.cutpoint = \"5\": must be at most the model's "
            "layers (4)");
  EXPECT_EQ(ErrorOf(Small(8, 8, 1), {{"tensor", "4"}}),
            "s.yaml:9:5: strategies[0].options.tensor = \"4\": sub-layer 0 (layer0.attn): "
            "tensor degree t=4: its micro-batches of training.micro_batch x t / 4 (the largest "
            "degree) = 1 samples must be a whole even number, to split into two sub-batches");
  EXPECT_EQ(ErrorOf(s, {{"sm_interference", "2"}}),
            "s.yaml:9:5: strategies[0].options.sm_interference = \"2\": must be a number in [0, "
            "1]");
  Scenario selective = s;
  selective.model.recompute = Recompute::kSelective;
  EXPECT_NE(ErrorOf(selective, {}).find("model.recompute: selective is not supported"),
            std::string::npos);
}

}  // namespace
}  // namespace stratasim
