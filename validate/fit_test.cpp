// Shrink to fit (fit.h): a shrunk plan keeps t, p and the rank order; replicas (then stages)
// are dropped with the batch and the model cut to match; kinds whose shape cannot be kept are
// refused with the reason.
#include "validate/fit.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "strategies/plan.h"
#include "strategies/test_scenario.h"

namespace stratasim::validate {
namespace {

using testing::SpecOf;

// 16 GPUs: two servers of 8, as a scenario written for a small cluster.
Scenario Cluster16(int global_batch, int layers = 4) {
  Scenario s = testing::TinyGptScenario({8, 2, global_batch, 1, layers, 4});
  s.simulation.fold = false;  // every rank's tasks, to compare them rank by rank
  return s;
}

std::string RefusalOf(const Scenario& s, const StrategySpec& spec, int ranks,
                      FitPolicy policy = {}) {
  try {
    FitToRanks(s, spec, ranks, policy);
  } catch (const FitRefused& e) {
    return e.what();
  }
  return "not refused";
}

// The groups of `size` ranks that some tensor-parallel collective of the plan runs over: those
// not on the data-parallel gradient streams ("dp" of the pipelines, "comm" of kind tensor).
std::set<std::vector<int>> GroupsOfSize(const Plan& plan, int size) {
  std::set<std::vector<int>> groups;
  const TaskGraph& g = plan.graph;
  for (const Collective& c : g.collectives()) {
    if (static_cast<int>(c.ranks.size()) != size) continue;
    const std::string& stream = g.streams()[g.task(c.members.at(0)).stream];
    if (stream == "dp" || stream == "comm") continue;
    std::vector<int> g = c.ranks;
    std::sort(g.begin(), g.end());
    groups.insert(g);
  }
  return groups;
}

// Every rank of the shrunk plan has the pipeline stage and the tensor group (mapped through
// full_rank) of the full plan's rank it stands for.
void ExpectSameTensorGroupsAndStages(const Scenario& s, const StrategySpec& spec, const Fit& f,
                                     int t) {
  const Plan full = PlanStrategy(s, spec);
  const Plan fitted = PlanStrategy(f.scenario, f.strategy);
  ASSERT_EQ(fitted.graph.num_ranks(), f.gpus);
  ASSERT_EQ(static_cast<int>(f.full_rank.size()), f.gpus);
  // Pipelined plans say each rank's stage; others have one stage.
  if (!full.rank_stage.empty()) {
    ASSERT_EQ(static_cast<int>(fitted.rank_stage.size()), f.gpus);
    for (int r = 0; r < f.gpus; ++r) {
      EXPECT_EQ(fitted.rank_stage[r], full.rank_stage[f.full_rank[r]]) << "rank " << r;
    }
  }
  const std::set<std::vector<int>> full_groups = GroupsOfSize(full, t);
  const std::set<std::vector<int>> fitted_groups = GroupsOfSize(fitted, t);
  std::set<int> covered;
  for (const std::vector<int>& g : fitted_groups) {
    std::vector<int> mapped;
    for (int r : g) mapped.push_back(f.full_rank[r]);
    std::sort(mapped.begin(), mapped.end());
    EXPECT_TRUE(full_groups.count(mapped)) << "tensor group of ranks " << g[0] << ".." << g.back();
    covered.insert(g.begin(), g.end());
  }
  EXPECT_EQ(static_cast<int>(covered.size()), f.gpus);  // every rank is in a tensor group
}

TEST(Fit, ThreeDKeepsTensorStagesAndTheRankOrder) {
  const Scenario s = Cluster16(16);
  const StrategySpec spec = SpecOf("3d", "3d", {{"tensor", "2"}, {"stages", "2"}, {"data", "4"}});
  const Fit f = FitToRanks(s, spec, 4, {});
  ASSERT_TRUE(f.shrunk);
  EXPECT_EQ(f.gpus, 4);
  EXPECT_EQ(f.full_gpus, 16);
  EXPECT_EQ(f.fitted.tensor, 2);
  EXPECT_EQ(f.fitted.stages, 2);
  EXPECT_EQ(f.fitted.data, 1);
  EXPECT_EQ(f.fitted.order, "tpd");
  EXPECT_EQ(f.full_rank, (std::vector<int>{0, 1, 2, 3}));  // tpd: the first replica's ranks
  EXPECT_EQ(f.scenario.cluster.NumGpus(), 4);
  EXPECT_EQ(f.scenario.training.global_batch, 4);
  EXPECT_EQ(f.strategy.options.at("data").text, "1");
  EXPECT_EQ(DescribeFit(f),
            "data-parallel replicas 4 -> 1; GPUs 16 -> 4 (servers 2 -> 1); global batch 16 -> 4 "
            "(4 per replica, as in the full plan); kept: tensor 2 x stages 2, rank order tpd; "
            "ranks 0-3 are the full plan's ranks 0-3");
  ExpectSameTensorGroupsAndStages(s, spec, f, 2);
  // Each replica runs the micro-batches it ran in the full plan.
  EXPECT_EQ(PlanStrategy(f.scenario, f.strategy).samples_per_iteration, 4);
}

TEST(Fit, ReplicasFastestOrderMapsEachPositionToItsFullRank) {
  const Scenario s = Cluster16(16);
  const StrategySpec spec =
      SpecOf("3d", "3d", {{"tensor", "2"}, {"stages", "2"}, {"data", "4"}, {"rank_order", "dtp"}});
  const Fit f = FitToRanks(s, spec, 8, {});
  ASSERT_TRUE(f.shrunk);
  EXPECT_EQ(f.fitted.data, 2);
  EXPECT_EQ(f.fitted.order, "dtp");
  // dtp: rank = replica + d x (tp + t x stage); d = 2 here, 4 in the full plan.
  EXPECT_EQ(f.full_rank, (std::vector<int>{0, 1, 4, 5, 8, 9, 12, 13}));
  EXPECT_NE(DescribeFit(f).find("rank r holds the position of the full plan's rank: 0->0, 1->1, "
                                "2->4, 3->5, 4->8"),
            std::string::npos)
      << DescribeFit(f);
  ExpectSameTensorGroupsAndStages(s, spec, f, 2);
}

TEST(Fit, DdpKeepsEachReplicasBatch) {
  const Scenario s = Cluster16(64);
  const StrategySpec spec = SpecOf("ddp", "ddp", {});
  const Fit f = FitToRanks(s, spec, 4, {});
  ASSERT_TRUE(f.shrunk);
  EXPECT_EQ(f.gpus, 4);
  EXPECT_EQ(f.fitted.data, 4);
  EXPECT_EQ(f.changes.at(0), "data-parallel replicas 16 -> 4");
  EXPECT_EQ(f.changes.at(1), "GPUs 16 -> 4 (servers 2 -> 1)");
  EXPECT_EQ(f.changes.at(2), "global batch 64 -> 16 (4 per replica, as in the full plan)");
  const Plan p = PlanStrategy(f.scenario, f.strategy);
  EXPECT_EQ(p.graph.num_ranks(), 4);
  EXPECT_EQ(p.samples_per_iteration, 16);
  // The whole-server part: 4 of a server's 8 GPUs.
  ASSERT_EQ(f.scenario.cluster.groups.size(), 1u);
  EXPECT_EQ(f.scenario.cluster.groups[0].gpus_per_server, 4);
}

TEST(Fit, ZeroShardsOverTheKeptGpusAndHybridKeepsWholeServers) {
  const Scenario s = Cluster16(16);
  const Fit z3 = FitToRanks(s, SpecOf("z", "zero3", {}), 8, {});
  EXPECT_EQ(z3.changes.at(0),
            "data-parallel replicas 16 -> 8, which are also ZeRO's shards: each GPU holds 1/8 of "
            "the sharded states instead of 1/16");
  EXPECT_EQ(PlanStrategy(z3.scenario, z3.strategy).graph.num_ranks(), 8);

  const StrategySpec hybrid = SpecOf("h", "zero2", {{"shard_group", "server"}});
  const Fit h = FitToRanks(s, hybrid, 12, {});
  EXPECT_EQ(h.gpus, 8);  // one whole server: a replica is a server's shard group
  EXPECT_EQ(h.changes.at(0),
            "data-parallel replicas 2 -> 1 (hybrid sharding: one shard group per server)");
  EXPECT_EQ(h.scenario.cluster.NumServers(), 1);
  const std::string e = RefusalOf(s, hybrid, 4);
  EXPECT_NE(
      e.find("s.yaml:8:5: strategies[0].kind = \"zero2\": strategy h cannot be shrunk to 4 "
             "ranks (--fit): one data-parallel replica needs a server of 8 GPUs, more than the 4 "
             "ranks"),
      std::string::npos)
      << e;
}

TEST(Fit, TensorDegreeDerivedFromTheServerIsWrittenOut) {
  Scenario s = Cluster16(16);
  s.model.heads = 8;
  const StrategySpec spec = SpecOf("tp", "tensor", {});
  const Fit f = FitToRanks(s, spec, 8, {});
  EXPECT_EQ(f.strategy.options.at("degree").text, "8");
  EXPECT_EQ(f.fitted.tensor, 8);
  EXPECT_EQ(f.fitted.data, 1);
  EXPECT_NE(DescribeFit(f).find("option degree = 8 written out"), std::string::npos);
  ExpectSameTensorGroupsAndStages(s, spec, f, 8);
  const std::string e = RefusalOf(s, spec, 4);
  EXPECT_NE(e.find("one data-parallel replica needs tensor 8 x stages 1 = 8 GPUs, more than the 4 "
                   "ranks"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find("dp,pp"), std::string::npos) << e;  // no stages to drop
}

TEST(Fit, DroppingStagesNeedsDpPpAndCutsTheirLayers) {
  const Scenario s = Cluster16(16, 8);
  const StrategySpec spec = SpecOf("3d", "3d", {{"tensor", "2"}, {"stages", "4"}, {"data", "2"}});
  EXPECT_NE(RefusalOf(s, spec, 4)
                .find("one data-parallel replica needs tensor 2 x stages 4 = 8 "
                      "GPUs, more than the 4 ranks (--fit dp,pp may drop "
                      "pipeline stages too)"),
            std::string::npos);
  const Fit f = FitToRanks(s, spec, 4, FitPolicy{true});
  ASSERT_TRUE(f.shrunk);
  EXPECT_EQ(f.fitted.stages, 2);
  EXPECT_EQ(f.fitted.data, 1);
  EXPECT_EQ(f.fitted.tensor, 2);
  const Plan full = PlanStrategy(s, spec);
  ASSERT_TRUE(full.pipeline);
  // The first two stages of the full partition, with their layers.
  const std::string& partition = full.pipeline->partition;
  const size_t second = partition.find(',', partition.find(',') + 1);
  const std::string kept = partition.substr(0, second);
  EXPECT_EQ(f.strategy.options.at("partition").text, kept);
  const int layers = std::stoi(kept) + std::stoi(kept.substr(kept.find(',') + 1));
  EXPECT_EQ(f.scenario.model.layers, layers);
  EXPECT_NE(
      DescribeFit(f).find("pipeline stages 4 -> 2: stages 2-3 dropped with their " +
                          std::to_string(8 - layers) +
                          " transformer layers (model layers "
                          "8 -> " +
                          std::to_string(layers) + ", partition " + partition + " -> " + kept +
                          "); the output head moves from stage 3 onto "
                          "stage 1"),
      std::string::npos)
      << DescribeFit(f);
  const Plan fitted = PlanStrategy(f.scenario, f.strategy);
  ASSERT_TRUE(fitted.pipeline);
  EXPECT_EQ(fitted.pipeline->partition, kept);
  ExpectSameTensorGroupsAndStages(s, spec, f, 2);
}

TEST(Fit, StagesThatCannotBeDroppedAreRefused) {
  const Scenario s = Cluster16(16, 8);
  EXPECT_NE(RefusalOf(s,
                      SpecOf("i", "3d",
                             {{"tensor", "2"},
                              {"stages", "4"},
                              {"data", "2"},
                              {"schedule", "interleaved"},
                              {"micro_batches", "8"}}),
                      4, FitPolicy{true})
                .find("dropping pipeline stages of the interleaved schedule would change every "
                      "stage's layers"),
            std::string::npos);
  // Kind pipeline has at least 2 stages: 3 ranks hold one stage of tensor 2.
  EXPECT_NE(
      RefusalOf(s, SpecOf("pp", "pipeline", {{"tensor", "2"}, {"stages", "8"}}), 3, FitPolicy{true})
          .find("even 2 pipeline stages of tensor 2 need more than the 3 ranks (kind pipeline has "
                "at least 2 stages)"),
      std::string::npos);
}

TEST(Fit, KindsWhoseShapeCannotBeKeptAreRefused) {
  const Scenario s = Cluster16(16);
  const std::string planner = RefusalOf(s, SpecOf("d", "dapple", {{"stages", "2"}}), 4);
  EXPECT_NE(planner.find("s.yaml:8:5: strategies[0].kind = \"dapple\": strategy d cannot be shrunk "
                         "to 4 ranks (--fit): its planner chooses the layout"),
            std::string::npos)
      << planner;
  EXPECT_NE(RefusalOf(s, SpecOf("m", "deepspeed-moe", {}), 4).find("expert parallelism spreads"),
            std::string::npos);
  EXPECT_NE(RefusalOf(s, SpecOf("ps", "parameter-server", {}), 4)
                .find("parameter-server shards are placed per server"),
            std::string::npos);
  EXPECT_NE(RefusalOf(s, SpecOf("o", "oases", {{"planner", "ilp"}}), 4)
                .find("planner: ilp chooses every sub-layer's tensor degree"),
            std::string::npos);
  // Not even one replica of tensor 2 x stages 2 in 3 ranks.
  EXPECT_NE(RefusalOf(s, SpecOf("3d", "3d", {{"tensor", "2"}, {"stages", "2"}, {"data", "4"}}), 3)
                .find("one data-parallel replica needs tensor 2 x stages 2 = 4 GPUs, more than "
                      "the 3 ranks"),
            std::string::npos);
}

TEST(Fit, AGlobalBatchThatDoesNotSplitIntoReplicasIsRefused) {
  const Scenario s = Cluster16(10);  // 3d with explicit micro-batches ignores global_batch
  const std::string e = RefusalOf(
      s,
      SpecOf("3d", "3d", {{"tensor", "2"}, {"stages", "2"}, {"data", "4"}, {"micro_batches", "2"}}),
      4);
  EXPECT_NE(e.find("training.global_batch (10) is not a multiple of the data-parallel replicas "
                   "(4): a replica's share of the batch is not whole"),
            std::string::npos)
      << e;
}

TEST(Fit, APlanThatFitsIsLeftAlone) {
  const Scenario s = Cluster16(16);
  const StrategySpec spec = SpecOf("ddp", "ddp", {});
  const Fit f = FitToRanks(s, spec, 16, {});
  EXPECT_FALSE(f.shrunk);
  EXPECT_EQ(f.gpus, 16);
  EXPECT_EQ(DescribeFit(f), "");
  EXPECT_EQ(f.scenario.training.global_batch, 16);
}

TEST(Fit, PolicyParsing) {
  EXPECT_FALSE(ParseFitPolicy("").stages);
  EXPECT_FALSE(ParseFitPolicy("dp").stages);
  EXPECT_TRUE(ParseFitPolicy("dp,pp").stages);
  try {
    ParseFitPolicy("pp");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "--fit pp: must be dp (drop data-parallel replicas) or dp,pp (then pipeline "
                 "stages too)");
  }
}

TEST(Fit, FirstGpusCutsAServerToWhatItKeeps) {
  ClusterSpec c;
  ServerGroup g;
  g.name = "pcie";
  g.count = 2;
  g.gpu = "A100-SXM4-80GB";
  g.gpus_per_server = 8;
  g.nics.count = 4;
  g.pcie = PcieSpec{2, 2, LinkSpec{32e9, 1e-6}, LinkSpec{32e9, 1e-6}, LinkSpec{50e9, 1e-6}};
  g.nvlink = NvLinkSpec{{{0, 1}, {2, 3}, {4, 5}, {6, 7}}, LinkSpec{100e9, 1e-6}};
  c.groups.push_back(g);
  StragglerSpec slow;
  slow.ranks = {3, 9};
  c.stragglers.entries.push_back(slow);
  StragglerSpec gone;
  gone.ranks = {12};
  c.stragglers.entries.push_back(gone);

  const ClusterSpec k = FirstGpus(c, 10);
  EXPECT_EQ(k.NumGpus(), 10);
  EXPECT_EQ(k.NumServers(), 2);
  ASSERT_EQ(k.groups.size(), 2u);
  EXPECT_EQ(k.groups[0].count, 1);
  EXPECT_EQ(k.groups[1].gpus_per_server, 2);
  EXPECT_EQ(k.groups[1].nics.count, 2);
  EXPECT_EQ(k.groups[1].pcie->gpus_per_switch, 2);
  EXPECT_EQ(k.groups[1].pcie->sockets, 1);
  EXPECT_EQ(k.groups[1].nvlink->pairs, (std::vector<std::pair<int, int>>{{0, 1}}));
  ASSERT_EQ(k.stragglers.entries.size(), 1u);
  EXPECT_EQ(k.stragglers.entries[0].ranks, (std::vector<int>{3, 9}));
  EXPECT_THROW(FirstGpus(c, 17), Error);
}

}  // namespace
}  // namespace stratasim::validate
