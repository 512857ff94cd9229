// Context parallelism (kind 3d, option `context`): the workload of one GPU of a group, the
// ring's traffic per layer and pass (the K/V of the whole sequence, (c-1)/c of it forward and
// twice that backward), its groups and memory, the data x context gradient groups, and the
// errors.
#include "strategies/pipeline/context_parallel.h"

#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <set>

#include "strategies/pipeline/pipeline.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

// A GPT of 4 layers x 256 hidden, 4 heads, sequence 128, micro-batch 1, BF16 on `gpus` GPUs.
Scenario Small(int gpus, int global_batch = 8) {
  return testing::TinyGptScenario({gpus, 1, global_batch, 1, 4, 4});
}

StrategySpec ThreeD(std::map<std::string, std::string> options) {
  return testing::SpecOf("3d", "3d", options);
}

// K and V of the whole sequence of one micro-batch are b s kv e bytes each.
constexpr double kKvFull = 1.0 * 128 * 256 * 2;

// Bytes `rank` sends on the ring in micro-batch 0 of iteration 0 for `layer`'s pass `pass`
// (cp_kv: forward, cp_kv_dkv: backward, cp_kv_recompute: a recomputed forward).
double RingBytes(const Plan& plan, int rank, const std::string& layer, const std::string& pass) {
  const std::string prefix = "it0/mb0/" + layer + "/" + pass;
  double bytes = 0;
  for (const Task& t : plan.graph.tasks()) {
    if (t.kind != TaskKind::kSend || t.rank != rank || t.category != "cp") continue;
    const std::string name = t.name.str();
    if (name.rfind(prefix, 0) == 0 &&
        std::isdigit(static_cast<unsigned char>(name[prefix.size()]))) {
      bytes += t.bytes;
    }
  }
  return bytes;
}

TEST(ContextParallel, OneGpuRunsAFractionOfTheWorkAndHoldsAllParameters) {
  const Scenario s = Small(2);
  const Workload full = BuildWorkload(s.model, 1, DType::kBF16);
  for (int c : {2, 4}) {
    const Workload w = ContextParallelWorkload(s.model, 1, DType::kBF16, 0, c);
    ASSERT_EQ(w.layers.size(), full.layers.size());
    // Every op is token-wise (s/c tokens) or the attention core (s/c queries of s keys).
    EXPECT_DOUBLE_EQ(w.ForwardFlops(), full.ForwardFlops() / c);
    EXPECT_DOUBLE_EQ(w.BackwardFlops(), full.BackwardFlops() / c);
    EXPECT_DOUBLE_EQ(w.ActivationBytes(), full.ActivationBytes() / c);
    EXPECT_DOUBLE_EQ(w.params, full.params);
    EXPECT_DOUBLE_EQ(w.tokens_per_sample, 128);
    const LayerCost& L = w.layers[1];
    EXPECT_DOUBLE_EQ(L.input_bytes, full.layers[1].input_bytes / c);
    for (size_t j = 0; j < L.ops.size(); ++j) {
      const OpCost& op = L.ops[j];
      EXPECT_EQ(op.attention_core, full.layers[1].ops[j].attention_core);
      // The query rows of every product are the GPU's s/c tokens.
      if (op.forward.gemm.known()) {
        EXPECT_DOUBLE_EQ(op.forward.gemm.m, full.layers[1].ops[j].forward.gemm.m / c) << op.name;
      }
    }
  }
}

TEST(ContextParallel, RingTrafficIsTheWholeSequencesKeysAndValuesPerLayerAndPass) {
  for (int c : {2, 4}) {
    const Plan plan = PlanPipeline(
        Small(c),
        ThreeD({{"tensor", "1"}, {"context", std::to_string(c)}, {"stages", "1"}, {"data", "1"}}));
    plan.graph.Validate();
    // Forward: c-1 blocks of K and V of s/c tokens = 2 (c-1)/c of b s kv e.
    const double forward = 2.0 * (c - 1) / c * kKvFull;
    for (int rank = 0; rank < c; ++rank) {
      for (const std::string layer : {"layer0", "layer3"}) {
        EXPECT_DOUBLE_EQ(RingBytes(plan, rank, layer, "cp_kv"), forward) << c << " " << rank;
        // Backward: the K/V blocks again and their gradients dK, dV.
        EXPECT_DOUBLE_EQ(RingBytes(plan, rank, layer, "cp_kv_dkv"), 2 * forward) << c;
        EXPECT_DOUBLE_EQ(RingBytes(plan, rank, layer, "cp_kv_recompute"), 0);
      }
      // Layers without attention have no ring.
      EXPECT_DOUBLE_EQ(RingBytes(plan, rank, "embedding", "cp_kv"), 0);
    }
  }
}

TEST(ContextParallel, TensorShardsRunTheirOwnRings) {
  // t = 2, c = 2 on 4 GPUs: ranks {0, 2} and {1, 3} (tensor index 0 and 1) form the rings,
  // each passing the K/V of its half of the heads.
  const Plan plan = PlanPipeline(
      Small(4), ThreeD({{"tensor", "2"}, {"context", "2"}, {"stages", "1"}, {"data", "1"}}));
  std::set<std::pair<int, int>> pairs;
  for (const Task& t : plan.graph.tasks()) {
    if (t.kind == TaskKind::kSend && t.category == "cp") pairs.insert({t.rank, t.peer});
  }
  EXPECT_EQ(pairs, (std::set<std::pair<int, int>>{{0, 2}, {2, 0}, {1, 3}, {3, 1}}));
  EXPECT_DOUBLE_EQ(RingBytes(plan, 1, "layer2", "cp_kv"), 2.0 * 1 / 2 * kKvFull / 2);
}

TEST(ContextParallel, RecomputedCoreRepeatsItsForwardRing) {
  const Plan plan = PlanPipeline(Small(2), ThreeD({{"tensor", "1"},
                                                   {"context", "2"},
                                                   {"stages", "1"},
                                                   {"data", "1"},
                                                   {"recompute", "selective"}}));
  EXPECT_DOUBLE_EQ(RingBytes(plan, 0, "layer1", "cp_kv_recompute"), kKvFull);
  EXPECT_DOUBLE_EQ(RingBytes(plan, 0, "layer1", "cp_kv"), kKvFull);
}

TEST(ContextParallel, StepsSplitTheCoreAndWaitForTheirBlock) {
  const Scenario s = Small(2);
  const Plan plan =
      PlanPipeline(s, ThreeD({{"tensor", "1"}, {"context", "2"}, {"stages", "1"}, {"data", "1"}}));
  const Workload full = BuildWorkload(s.model, 1, DType::kBF16);
  double core_full = 0;
  for (const OpCost& op : full.layers[1].ops) core_full += op.attention_core ? op.forward.flops : 0;
  const TaskGraph& g = plan.graph;
  std::map<std::string, double> step_flops;
  for (const Task& t : g.tasks()) {
    const std::string name = t.name.str();
    if (t.rank != 0 || name.rfind("it0/mb0/layer0/", 0) != 0) continue;
    if (name.find("/fwd/ring") == std::string::npos) continue;
    step_flops[name.substr(name.size() - 5)] += t.flops;
    // Step 1 computes with the block received at step 0.
    if (name == "it0/mb0/layer0/attn_scores/fwd/ring1") {
      bool waits = false;
      for (TaskId d : t.deps) waits |= g.task(d).kind == TaskKind::kRecv;
      EXPECT_TRUE(waits);
    }
  }
  // Each of the c steps runs 1/c of the GPU's core, itself 1/c of the full one.
  EXPECT_EQ(step_flops.size(), 2u);
  for (const auto& [step, flops] : step_flops) EXPECT_DOUBLE_EQ(flops, core_full / 4) << step;
}

TEST(ContextParallel, ReceiveBuffersAreAllocatedForTheRingAndFreed) {
  const Plan plan = PlanPipeline(
      Small(2), ThreeD({{"tensor", "1"}, {"context", "2"}, {"stages", "1"}, {"data", "1"}}));
  const double block = kKvFull;  // K and V of s/2 tokens
  double held = 0, peak = 0;
  for (const Task& t : plan.graph.tasks()) {
    if (t.kind != TaskKind::kMemory || t.rank != 0 || t.category != "cp_buffers") continue;
    held += t.memory_delta_bytes;
    peak = std::max(peak, held);
  }
  EXPECT_DOUBLE_EQ(held, 0);
  EXPECT_DOUBLE_EQ(peak, 4 * block);  // the backward's K/V and dK/dV, double-buffered
}

TEST(ContextParallel, GradientsAreReducedOverDataAndContext) {
  // t = 1, c = 2, p = 2, d = 2 on 8 GPUs, rank order tpd: rank = k + 2 stage + 4 replica.
  const Plan plan = PlanPipeline(
      Small(8), ThreeD({{"tensor", "1"}, {"context", "2"}, {"stages", "2"}, {"data", "2"}}));
  plan.graph.Validate();
  std::set<std::vector<int>> dp;
  std::set<std::pair<int, int>> ring, pp;
  for (const Task& t : plan.graph.tasks()) {
    if (t.kind == TaskKind::kCollective && t.category == "dp") {
      dp.insert(plan.graph.collectives()[t.collective].ranks);
    }
    if (t.kind == TaskKind::kSend) (t.category == "cp" ? ring : pp).insert({t.rank, t.peer});
  }
  EXPECT_EQ(dp, (std::set<std::vector<int>>{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(ring, (std::set<std::pair<int, int>>{
                      {0, 1}, {1, 0}, {2, 3}, {3, 2}, {4, 5}, {5, 4}, {6, 7}, {7, 6}}));
  // Each context index sends its part of the boundary to the same context index of the next
  // stage.
  EXPECT_EQ(pp, (std::set<std::pair<int, int>>{
                    {0, 2}, {1, 3}, {2, 0}, {3, 1}, {4, 6}, {5, 7}, {6, 4}, {7, 5}}));
  EXPECT_EQ(plan.rank_stage, (std::vector<int>{0, 0, 1, 1, 0, 0, 1, 1}));
}

TEST(ContextParallel, ContextOneIsTheSamePlan) {
  const Scenario s = Small(8);
  const Plan without = PlanPipeline(s, ThreeD({{"tensor", "2"}, {"stages", "2"}, {"data", "2"}}));
  const Plan with =
      PlanPipeline(s, ThreeD({{"tensor", "2"}, {"context", "1"}, {"stages", "2"}, {"data", "2"}}));
  EXPECT_EQ(TaskGraphToJson(with.graph), TaskGraphToJson(without.graph));
  EXPECT_EQ(with.notes, without.notes);
}

TEST(ContextParallel, BadDegreesAreLocatedErrors) {
  const Scenario s = Small(8);
  std::string e = testing::PlanErrorOf(
      s, ThreeD({{"tensor", "2"}, {"context", "2"}, {"stages", "2"}, {"data", "2"}}));
  EXPECT_NE(e.find("s.yaml:9:5"), std::string::npos) << e;
  EXPECT_NE(e.find("strategies[0].options.data"), std::string::npos) << e;
  EXPECT_NE(e.find("tensor (2) x context (2) x stages (2) x data (2) = 16 must equal the GPU "
                   "count (8)"),
            std::string::npos)
      << e;

  Scenario odd = Small(2);
  odd.model.sequence = 130;
  e = testing::PlanErrorOf(
      odd, ThreeD({{"tensor", "1"}, {"context", "2"}, {"stages", "1"}, {"data", "1"}}));
  EXPECT_NE(e.find("strategies[0].options.context"), std::string::npos) << e;
  EXPECT_NE(e.find("the sequence (130) must be a multiple of 2 x context (4): the zig-zag split "
                   "cuts it into 2 x context chunks"),
            std::string::npos)
      << e;

  Scenario cnn = Small(2);
  cnn.model.kind = "vgg16";
  e = testing::PlanErrorOf(
      cnn, ThreeD({{"tensor", "1"}, {"context", "2"}, {"stages", "1"}, {"data", "1"}}));
  EXPECT_NE(e.find("strategies[0].options.context"), std::string::npos) << e;
  EXPECT_NE(e.find("context parallelism splits a transformer's sequences: model kind \"vgg16\" "
                   "is not supported (gpt, bert, llama, moe)"),
            std::string::npos)
      << e;

  e = testing::PlanErrorOf(
      s, ThreeD({{"tensor", "1"}, {"context", "0"}, {"stages", "1"}, {"data", "8"}}));
  EXPECT_NE(e.find("strategies[0].options.context"), std::string::npos) << e;

  // Only kind 3d has the option.
  e = testing::PlanErrorOf(s,
                           testing::SpecOf("pp", "pipeline", {{"stages", "2"}, {"context", "2"}}));
  EXPECT_NE(e.find("strategies[0].options.context = \"2\": unknown option"), std::string::npos)
      << e;
}

}  // namespace
}  // namespace stratasim
