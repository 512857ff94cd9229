#include "strategies/planners/dapple.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim::planners {
namespace {

// `servers` servers of four GPUs of `memory` bytes: `intra` B/s inside, one NIC of `nic` B/s per
// server, no latency.
ClusterView Servers(int servers, double intra = 100, double nic = 10, double memory = 1e12) {
  ClusterView c;
  for (int r = 0; r < 4 * servers; ++r) c.devices.push_back({0, r / 4, r / 4, -1, memory, 1});
  c.intra_Bps.assign(servers, intra);
  c.nic_Bps.assign(servers, nic);
  return c;
}

// Blocks with forward f, backward 2f, `act` bytes kept, `params` parameters and `out` boundary
// bytes each.
CostProfile Profile(const std::vector<double>& f, double act = 1, double params = 0,
                    double out = 0) {
  CostProfile p;
  p.kinds = {"gpu"};
  p.costs.resize(1);
  for (size_t i = 0; i < f.size(); ++i) {
    BlockCost b;
    b.name = "b" + std::to_string(i);
    b.forward_s = f[i];
    b.backward_s = 2 * f[i];
    b.activation_bytes = act;
    b.params = params;
    b.output_bytes = out;
    p.costs[0].push_back(b);
  }
  return p;
}

PlannerInput Input(CostProfile p, ClusterView c, int stages, int data, int micro_batches) {
  PlannerInput in;
  in.profile = std::move(p);
  in.cluster = std::move(c);
  in.stages = stages;
  in.data = data;
  in.micro_batches = micro_batches;
  return in;
}

TEST(Dapple, PoliciesTakeFreshServersUsedServersOrEveryServerInTurn) {
  const ClusterView c = Servers(2);
  std::vector<bool> taken(8, false);
  taken[0] = true;
  std::vector<bool> occ = taken;
  EXPECT_EQ(DapplePlace(c, occ, 2, 1, DapplePolicy::kFreshFirst), (std::vector<int>{4, 5}));
  occ = taken;
  EXPECT_EQ(DapplePlace(c, occ, 2, 1, DapplePolicy::kAppendFirst), (std::vector<int>{1, 2}));
  EXPECT_TRUE(occ[1] && occ[2] && !occ[3]);
  occ = taken;
  EXPECT_EQ(DapplePlace(c, occ, 3, 1, DapplePolicy::kScatterFirst), (std::vector<int>{1, 4, 2}));
  // Units of a tensor group of two: unit 0 (GPUs 0, 1) is not free.
  occ = taken;
  EXPECT_EQ(DapplePlace(c, occ, 1, 2, DapplePolicy::kAppendFirst), (std::vector<int>{2, 3}));
  // The preferred servers run out: the others' GPUs follow.
  occ = taken;
  EXPECT_EQ(DapplePlace(c, occ, 5, 1, DapplePolicy::kFreshFirst),
            (std::vector<int>{4, 5, 6, 7, 1}));
  occ = taken;
  EXPECT_TRUE(DapplePlace(c, occ, 8, 1, DapplePolicy::kFreshFirst).empty());
}

TEST(Dapple, RankOrdersLayOutPlacementsTheLoweringTakes) {
  // 2 stages of 4 replicas: tdp puts stage 0 on GPUs 0-3, tpd on 0, 2, 4, 6.
  EXPECT_EQ(OrderLayout(2, 1, 4, "tdp"),
            (std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(OrderLayout(2, 1, 4, "tpd"),
            (std::vector<std::vector<int>>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  PlannedPipeline plan;
  plan.stages = 2;
  plan.data = 4;
  plan.ranks = {0, 4, 1, 5, 2, 6, 3, 7};
  EXPECT_EQ(TakeRankOrder(plan), "tdp");
  EXPECT_TRUE(plan.ranks.empty());
  plan.ranks = {0, 4, 1, 5, 2, 6, 7, 3};  // no order numbers the GPUs so
  EXPECT_EQ(TakeRankOrder(plan), "tpd");
  EXPECT_EQ(plan.ranks.size(), 8u);
}

TEST(Dapple, LatencyIsWarmupSteadyCutsAndExposedAllReduce) {
  // One GPU per stage: stages of 3 s and 6 s per micro-batch, a 100 B boundary at 100 B/s.
  const CostProfile p = Profile({1, 2}, 1, 0, 100);
  const ClusterView c = Servers(1);
  std::vector<double> T;
  // beta = 6; 6 (4 - 1) + (3 + 6) + 2 x 1 (activation and gradient).
  EXPECT_DOUBLE_EQ(DappleLatency(p, c, {0, 1, 2}, {{0}, {1}}, 1, 4, 2, &T), 18 + 9 + 2);
  EXPECT_EQ(T, (std::vector<double>{3, 6}));
  // Two replicas per stage and 100 parameters (200 B of gradients) per block: stage 0's
  // all-reduce over GPUs 0 and 1 (2 (n - 1) / n x 200 B at 100 B/s = 2 s) is exposed, stage 1's
  // hides behind one block of 6 s.
  const CostProfile q = Profile({1, 2}, 1, 100, 0);
  EXPECT_DOUBLE_EQ(DappleLatency(q, c, {0, 1, 2}, {{0, 1}, {2, 3}}, 1, 2, 2), 6 + 9 + 2);
  // Across the servers' 10 B/s NICs: 20 s each; stage 1 hides 6 of its own.
  const ClusterView two = Servers(2);
  EXPECT_DOUBLE_EQ(DappleLatency(q, two, {0, 1, 2}, {{0, 4}, {1, 5}}, 1, 2, 2), 6 + 9 + 20);
  EXPECT_DOUBLE_EQ(DappleLatency(q, two, {0, 1, 2}, {{2, 3}, {0, 4}}, 1, 2, 2), 6 + 9 + 14);
}

TEST(Dapple, PartitionMinimisesThePipelineBlock) {
  // Unequal blocks on 2 GPUs, 2 stages fixed: the split 3 | 1,1,1 (9 | 9) beats 2 blocks each.
  PlannerInput in = Input(Profile({3, 1, 1, 1}), Servers(1), 2, 1, 4);
  in.cluster.devices.resize(2);
  DappleSettings settings;
  settings.choose_stages = false;
  const PlannedPipeline plan = PlanDapple(in, settings);
  EXPECT_EQ(plan.bounds, (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(plan.stage_seconds, (std::vector<double>{9, 9}));
  EXPECT_EQ(plan.schedule, "1f1b");
  EXPECT_EQ(plan.micro_batches, 4);
  EXPECT_DOUBLE_EQ(plan.predicted_seconds, 9 * 3 + 18);
}

TEST(Dapple, PlacementKeepsBigAllReducesInsideServersAndBigTransfersInsideServers) {
  // 2 servers x 4 GPUs, 2 stages of 4 replicas. Heavy parameters, light activations: each
  // stage on its own server (fresh-first), so that the all-reduces stay inside.
  DappleSettings settings;
  settings.choose_stages = false;
  PlannerInput heavy = Input(Profile({1, 1, 1, 1}, 1, 1000, 1), Servers(2), 2, 4, 4);
  PlannedPipeline plan = PlanDapple(heavy, settings);
  EXPECT_EQ(plan.ranks, (std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_NE(plan.notes[0].find("placement fresh-first,fresh-first"), std::string::npos)
      << plan.notes[0];
  // Heavy boundaries, no parameters: each replica's two stages on one server (scatter-first
  // puts stage 0 on both servers, stage 1 beside it).
  PlannerInput wide = Input(Profile({1, 1, 1, 1}, 1, 0, 1000), Servers(2), 2, 4, 4);
  plan = PlanDapple(wide, settings);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(wide.cluster.devices[plan.ranks[2 * r]].server,
              wide.cluster.devices[plan.ranks[2 * r + 1]].server)
        << "replica " << r;
  }
  EXPECT_NE(plan.notes[0].find("placement scatter-first"), std::string::npos) << plan.notes[0];
}

TEST(Dapple, ChoosesTheStageCountAndItsDataDegree) {
  // 8 GPUs over two servers, a large all-reduce over a slow NIC: fewer replicas are better,
  // as long as there are blocks for the stages.
  PlannerInput in =
      Input(Profile(std::vector<double>(8, 1), 1, 1000, 1), Servers(2, 100, 1), 2, 4, 4);
  const PlannedPipeline plan = PlanDapple(in, DappleSettings());
  EXPECT_EQ(plan.stages * plan.data, 8);
  EXPECT_EQ(plan.micro_batches * plan.data, 16);
  EXPECT_GE(plan.stages, 4);
  EXPECT_EQ(plan.ranks.size(), 8u);
}

TEST(Dapple, StageIHoldsSMinusIMicroBatchesAndPlansThatDoNotFitAreNotChosen) {
  // 4 equal blocks on 2 stages, 8 micro-batches, activations of 10 B per block. With 2 blocks
  // each, stage 0 would hold 2 in flight x 20 B = 40 B, stage 1 one x 20 B. A 30 B memory lets
  // stage 0 hold only one block: 1 | 3.
  PlannerInput in = Input(Profile({1, 1, 1, 1}, 10), Servers(1, 100, 10, 30), 2, 1, 8);
  in.cluster.devices.resize(2);
  DappleSettings settings;
  settings.choose_stages = false;
  const PlannedPipeline plan = PlanDapple(in, settings);
  EXPECT_EQ(plan.bounds, (std::vector<int>{0, 1, 4}));
  EXPECT_LE(StageMemoryBytes(in.profile, 0, 0, 1, 2), 30);
  EXPECT_LE(StageMemoryBytes(in.profile, 0, 1, 4, 1), 30);
  // 15 B fits no partition: stage 0 needs 20 B for one block.
  in.cluster.devices[0].memory_bytes = in.cluster.devices[1].memory_bytes = 15;
  try {
    PlanDapple(in, settings);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "dapple: no plan fits: 1 candidates (stage counts x placements) tried, 1 of them "
                 "out of memory");
  }
}

}  // namespace
}  // namespace stratasim::planners
