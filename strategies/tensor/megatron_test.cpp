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

// Bytes rank 0 sends for tasks whose name holds `name`: collectives at ring volume ((t-1)/t of
// the buffer for a reduce-scatter or all-gather), transfers in full.
double SentByRank0(const Plan& p, const std::string& name) {
  double sent = 0;
  for (const Collective& c : p.graph.collectives()) {
    if (c.ranks.front() != 0) continue;
    if (p.graph.task(c.members[0]).name.str().find(name) == std::string::npos) continue;
    const double n = static_cast<double>(c.ranks.size());
    sent += (c.kind == CollectiveKind::kAllReduce ? 2 : 1) * (n - 1) / n * c.bytes;
  }
  for (const Task& t : p.graph.tasks()) {
    if (t.kind == TaskKind::kSend && t.rank == 0 && t.name.str().find(name) != std::string::npos)
      sent += t.bytes;
  }
  return sent;
}

TEST(TensorParallel, CommOverlapSplitsTheCollectivesIntoChunksBesideTheirGemms) {
  const Scenario s = Small(4, 2, 2);
  const Plan sp = PlanTensorParallel(s, Spec({{"degree", "4"}, {"sequence_parallel", "true"}}));
  const Plan ov = PlanTensorParallel(
      s, Spec({{"degree", "4"}, {"sequence_parallel", "true"}, {"tp_comm_overlap", "true"}}));
  // The same bytes per rank, forward and backward, now point to point.
  EXPECT_GT(SentByRank0(sp, "/layer1/"), 0);
  EXPECT_DOUBLE_EQ(SentByRank0(ov, "/layer1/"), SentByRank0(sp, "/layer1/"));
  EXPECT_TRUE(LayerTraffic(ov, "/layer1/").empty());
  // qkv's forward: 4 GEMM chunks of a quarter of the FLOPs each, 3 ring steps of b s h / 4.
  const double bsh_bytes = 2.0 * 128 * 256 * 2;
  double gemm_flops = 0, plain_flops = 0;
  int chunks = 0, sends = 0;
  for (const Task& t : ov.graph.tasks()) {
    if (t.rank != 0) continue;
    const std::string name = t.name.str();
    if (name.rfind("it0/mb0/layer1/qkv/fwd/chunk", 0) == 0) {
      gemm_flops += t.flops;
      ++chunks;
    }
    if (t.kind == TaskKind::kSend && name.rfind("it0/mb0/layer1/qkv/tp_all_gather/", 0) == 0) {
      EXPECT_DOUBLE_EQ(t.bytes, bsh_bytes / 4);
      EXPECT_EQ(t.peer, 1);  // the next rank of the ring
      EXPECT_EQ(ov.graph.streams()[t.stream], "tp_send");
      ++sends;
    }
  }
  for (const Task& t : sp.graph.tasks()) {
    if (t.rank == 0 && t.name.str() == "it0/mb0/layer1/qkv/fwd") plain_flops = t.flops;
  }
  EXPECT_EQ(chunks, 4);
  EXPECT_EQ(sends, 3);
  EXPECT_DOUBLE_EQ(gemm_flops, plain_flops);
  // Step 1's GEMM chunk waits for the chunk received at step 0.
  for (const Task& t : ov.graph.tasks()) {
    if (t.rank != 0 || t.name.str() != "it0/mb0/layer1/qkv/fwd/chunk1") continue;
    bool waits = false;
    for (TaskId d : t.deps) waits = waits || ov.graph.task(d).kind == TaskKind::kRecv;
    EXPECT_TRUE(waits);
  }
  // The row-parallel GEMM's partial chunks are summed after the three transfers arrive.
  int sums = 0;
  for (const Task& t : ov.graph.tasks()) {
    if (t.rank != 0 || t.name.str() != "it0/mb0/layer1/proj/tp_reduce_scatter/sum") continue;
    int recvs = 0;
    for (TaskId d : t.deps) recvs += ov.graph.task(d).kind == TaskKind::kRecv;
    EXPECT_EQ(recvs, 3);
    ++sums;
  }
  EXPECT_EQ(sums, 1);
}

TEST(TensorParallel, CommOverlapNeedsSequenceParallelism) {
  EXPECT_EQ(
      testing::PlanErrorOf(Small(4, 2, 2), Spec({{"degree", "4"}, {"tp_comm_overlap", "true"}})),
      "s.yaml:9:5: strategies[0].options.tp_comm_overlap = \"true\": needs "
      "sequence_parallel: true (it overlaps the all-gathers and reduce-scatters of sequence "
      "parallelism)");
  EXPECT_EQ(
      testing::PlanErrorOf(
          Small(4, 2, 2),
          testing::SpecOf(
              "3d", "3d",
              {{"tensor", "2"}, {"stages", "2"}, {"data", "1"}, {"tp_comm_overlap", "true"}})),
      "s.yaml:9:5: strategies[0].options.tp_comm_overlap = \"true\": needs "
      "sequence_parallel: true (it overlaps the all-gathers and reduce-scatters of sequence "
      "parallelism)");
}

}  // namespace
}  // namespace stratasim
