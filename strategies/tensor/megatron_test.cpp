#include "strategies/tensor/megatron.h"

#include <gtest/gtest.h>

#include "models/gpt.h"
#include "models/memory.h"
#include "models/workload.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

Scenario Small(int gpus, int global_batch, int micro_batch) {
  return testing::TinyGptScenario({gpus, 1, global_batch, micro_batch, 4, 8});
}

StrategySpec Spec(std::map<std::string, std::string> options) {
  return testing::SpecOf("tp", "tensor", options);
}

// Collectives of layer `name` ("/layer1/") on rank 0, by kind: count and total bytes.
std::map<CollectiveKind, std::pair<int, double>> LayerTraffic(const Plan& p,
                                                              const std::string& name) {
  std::map<CollectiveKind, std::pair<int, double>> out;
  for (const Collective& c : p.graph.collectives()) {
    if (c.ranks.front() != 0) continue;
    if (p.graph.task(c.members[0]).name.str().find(name) == std::string::npos) continue;
    out[c.kind].first++;
    out[c.kind].second += c.bytes;
  }
  return out;
}

TEST(TensorParallel, FourAllReducesOfBshPerLayerPerMicroBatch) {
  const Scenario s = Small(4, 4, 2);  // t = 4, d = 1, 2 micro-batches of 2
  const Plan p = PlanTensorParallel(s, Spec({{"degree", "4"}}));
  const double bsh_bytes = 2.0 * 128 * 256 * 2;  // b s h BF16 elements
  for (const std::string mb : {"mb0", "mb1"}) {
    const auto traffic = LayerTraffic(p, mb + "/layer1/");
    ASSERT_EQ(traffic.size(), 1u);
    EXPECT_EQ(traffic.at(CollectiveKind::kAllReduce).first, 4);
    EXPECT_DOUBLE_EQ(traffic.at(CollectiveKind::kAllReduce).second, 4 * bsh_bytes);
  }
  for (const Collective& c : p.graph.collectives()) {
    EXPECT_EQ(c.ranks, (std::vector<int>{0, 1, 2, 3}));  // no data parallelism with d = 1
    EXPECT_EQ(p.graph.task(c.members[0]).stream, p.graph.task(0).stream);  // on compute
  }
  // The kernel after the attention all-reduce waits for it.
  for (const Task& t : p.graph.tasks()) {
    if (t.rank == 0 && t.name == "it0/mb0/layer1/residual1/fwd") {
      EXPECT_EQ(p.graph.task(t.deps.at(0)).name, "it0/mb0/layer1/proj/tp_all_reduce");
    }
  }
}

TEST(TensorParallel, SequenceParallelReplacesAllReducesByReduceScatterAndAllGather) {
  const Scenario s = Small(4, 2, 2);
  const Plan p = PlanTensorParallel(s, Spec({{"degree", "4"}, {"sequence_parallel", "true"}}));
  const double bsh_bytes = 2.0 * 128 * 256 * 2;
  const auto traffic = LayerTraffic(p, "/layer2/");
  ASSERT_EQ(traffic.size(), 2u);
  EXPECT_EQ(traffic.at(CollectiveKind::kReduceScatter).first, 4);
  EXPECT_EQ(traffic.at(CollectiveKind::kAllGather).first, 4);
  // Ring volume: (t-1)/t of the buffer each, so RS + AG move what one all-reduce moves.
  EXPECT_DOUBLE_EQ(traffic.at(CollectiveKind::kReduceScatter).second, 4 * bsh_bytes);
  EXPECT_DOUBLE_EQ(traffic.at(CollectiveKind::kAllGather).second, 4 * bsh_bytes);
}

TEST(TensorParallel, LayerWorkWeightsAndActivationsSplitTWays) {
  Scenario s = Small(8, 2, 2);
  const ModelSpec flash_model = s.model;
  const Workload flash_full = BuildWorkload(flash_model, 2, DType::kBF16);
  s.model.attention = Attention::kUnfused;  // Korthikanti's figures
  const Workload full = BuildWorkload(s.model, 2, DType::kBF16);
  const double b = 2, sq = 128, h = 256, a = 8;
  for (const int t : {2, 4, 8}) {
    const Workload w = TensorParallelShard(full, t, false, s.model);
    const LayerCost& L = w.layers[1];
    EXPECT_NEAR(L.ForwardFlops() * t, full.layers[1].ForwardFlops(), 1e-6 * L.ForwardFlops());
    EXPECT_NEAR(L.BackwardFlops() * t, full.layers[1].BackwardFlops(), 1e-6 * L.BackwardFlops());
    EXPECT_NEAR(L.params * t, full.layers[1].params, 1e-6);
    // Korthikanti et al. 2022, Table 2: s b h (10 + 24/t + 5 a s/(h t)), and with sequence
    // parallelism s b h (34/t + 5 a s/(h t)).
    EXPECT_NEAR(L.activation_bytes, sq * b * h * (10 + 24.0 / t + 5 * a * sq / (h * t)), 1);
    const Workload sp = TensorParallelShard(full, t, true, s.model);
    EXPECT_NEAR(sp.layers[1].activation_bytes, sq * b * h * (34.0 / t + 5 * a * sq / (h * t)), 1);
    // Flash attention: the 5 a s^2 b term becomes the logsumexp, 4 a s b bytes, split by heads.
    const Workload flash = TensorParallelShard(flash_full, t, false, flash_model);
    EXPECT_NEAR(flash.layers[1].activation_bytes, sq * b * h * (10 + 24.0 / t) + 4 * a * sq * b / t,
                1);
    EXPECT_NEAR(flash.layers[1].ForwardFlops() * t, flash_full.layers[1].ForwardFlops(),
                1e-6 * flash.layers[1].ForwardFlops());
    // Tied embedding: the vocabulary table is split, the head keeps its norm.
    EXPECT_NEAR(w.layers.front().params * t, full.layers.front().params, 1e-6);
    EXPECT_EQ(w.layers.back().params, full.layers.back().params);
  }
}

TEST(TensorParallel, DataParallelReplicasAllReduceTheirShardsGradients) {
  const Scenario s = Small(8, 8, 2);  // t = 4, d = 2: 2 micro-batches
  const Plan p = PlanTensorParallel(s, Spec({{"degree", "4"}}));
  const Workload shard =
      TensorParallelShard(BuildWorkload(s.model, 2, DType::kBF16), 4, false, s.model);
  std::map<int, double> dp;  // first rank -> bytes
  for (const Collective& c : p.graph.collectives()) {
    if (p.graph.task(c.members[0]).category != "dp") continue;
    ASSERT_EQ(c.ranks.size(), 2u);
    EXPECT_EQ(c.ranks[1] - c.ranks[0], 4);
    dp[c.ranks[0]] += c.bytes;
  }
  ASSERT_EQ(dp.size(), 4u);
  for (const auto& [rank, bytes] : dp) EXPECT_NEAR(bytes, shard.params * 2, 1) << rank;
}

TEST(TensorParallel, DegreeMustDivideGpusAndHeads) {
  try {
    PlanTensorParallel(Small(4, 4, 2), Spec({{"degree", "3"}}));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "strategies[0].options.degree");
    EXPECT_NE(std::string(e.what()).find("degree t=3 must divide the GPU count (4)"),
              std::string::npos)
        << e.what();
  }
  Scenario s = Small(8, 8, 2);
  s.model.heads = 4;
  try {
    PlanTensorParallel(s, Spec({{"degree", "8"}}));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("degree t=8 must divide the model's attention heads (4)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(PlanTensorParallel(Small(4, 4, 2), Spec({{"degree", "0"}})), ConfigError);
  EXPECT_THROW(PlanTensorParallel(Small(4, 4, 2), Spec({{"sequence_parallel", "x"}})), ConfigError);
  EXPECT_THROW(PlanTensorParallel(Small(4, 4, 2), Spec({{"tp", "2"}})), ConfigError);
  try {
    PlanTensorParallel(Small(8, 6, 2), Spec({{"degree", "2"}}));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("global_batch (6)"), std::string::npos) << e.what();
  }
}

TEST(TensorParallel, FullRecomputationReRunsTheForwardAllReduces) {
  Scenario s = Small(2, 2, 2);
  s.model.recompute = Recompute::kFull;
  const Plan p = PlanTensorParallel(s, Spec({{"degree", "2"}}));
  const auto traffic = LayerTraffic(p, "/layer0/");
  EXPECT_EQ(traffic.at(CollectiveKind::kAllReduce).first, 6);  // 2 fwd + 2 recompute + 2 bwd
}

}  // namespace
}  // namespace stratasim
