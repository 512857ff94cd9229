#include "strategies/planners/autopipe_h.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "strategies/planners/test_profiles.h"

namespace stratasim::planners {
namespace {

using testing::Blocks;
using testing::Cluster;

// A GPT's sub-layer blocks in tens of milliseconds, 25 M parameters each, 8 MB activations
// between stages; on kind 1 (an older GPU) everything takes 1.6 times as long.
CostProfile TwoKinds() {
  std::vector<double> s = {0.04};
  for (int l = 0; l < 8; ++l) s.insert(s.end(), {0.01, 0.02});
  s.push_back(0.06);
  CostProfile p;
  p.kinds = {"rtx3090", "rtx2080ti"};
  p.costs = {Blocks(s), Blocks(s)};
  for (int k = 0; k < 2; ++k) {
    for (BlockCost& b : p.costs[k]) {
      b.params = 25e6;
      b.output_bytes = 8e6;
      if (k == 1) b.forward_s *= 1.6, b.backward_s *= 1.6, b.recompute_s *= 1.6;
    }
  }
  p.micro_batch = 2;
  p.state_bytes_per_param = 0;  // memory is not what this test is about
  return p;
}

// Two servers of each kind, 4 GPUs on 2 PCIe switches and one 1 GB/s NIC per server; 4 stages
// x 4 replicas.
PlannerInput Commodity() {
  PlannerInput in;
  in.profile = TwoKinds();
  in.cluster = Cluster(4, 4, 1e18, {0, 0, 1, 1}, 2);
  in.stages = 4;
  in.data = 4;
  in.micro_batches = 8;
  return in;
}

std::string Joined(const std::vector<std::string>& notes) {
  std::string all;
  for (const std::string& n : notes) all += n + "\n";
  return all;
}

TEST(AutoPipeH, NaiveRankOrderSendsEveryAllReduceThroughTheNics) {
  const PlannerInput in = Commodity();
  const MappingScore naive = ScoreMapping(in, NaiveRanks(in), {});
  // A replica per server: each stage's all-reduce rings over the four servers, so every NIC
  // carries 2 x 3/4 of all the gradients: 18 blocks x 25 M x 2 B x 1.5 = 1.35 GB.
  EXPECT_EQ(naive.busiest.link.substr(0, 4), "NIC ");
  EXPECT_NEAR(naive.busiest.bytes, 1.35e9, 1e6);
  EXPECT_NEAR(naive.busiest.seconds, 1.35, 1e-3);
}

TEST(AutoPipeH, ContentionAwareMappingBeatsTheNicSharingOne) {
  const PlannerInput in = Commodity();
  const PlannedPipeline p = PlanAutoPipeH(in);
  const MappingScore naive = ScoreMapping(in, NaiveRanks(in), {});
  ASSERT_EQ(p.ranks.size(), 16u);
  const MappingScore chosen = ScoreMapping(in, p.ranks, {});
  EXPECT_LT(chosen.busiest.seconds, naive.busiest.seconds / 2);
  EXPECT_LT(chosen.Total(), naive.Total());
  // Stages whose replicas all run on one kind can be balanced: the slow kind's stages are
  // given less work, so the pipeline beats the rank order's, whose every stage has a slow GPU.
  EXPECT_LT(chosen.pipeline_seconds, naive.pipeline_seconds);
  EXPECT_NE(Joined(p.notes).find("autopipe-h: contention-aware mapping"), std::string::npos);
  EXPECT_NE(Joined(p.notes).find("the rank order would give stage kinds "
                                 "rtx3090/rtx2080ti,rtx3090/rtx2080ti,rtx3090/rtx2080ti,"
                                 "rtx3090/rtx2080ti"),
            std::string::npos)
      << Joined(p.notes);
  EXPECT_GT(p.planning_seconds, 0);
  EXPECT_GT(p.predicted_seconds, 0);
}

TEST(AutoPipeH, AStageOnTheSlowKindGetsFewerBlocks) {
  PlannerInput in = Commodity();
  in.data = 1;
  in.stages = 4;
  in.cluster = Cluster(2, 2, 1e18, {0, 1});  // stages 0, 1 on the fast kind, 2, 3 on the slow
  AutoPipeHSettings s;
  s.mapping = DeviceMapping::kNaive;
  s.autopipe.slicer = false;
  const PlannedPipeline p = PlanAutoPipeH(in, s);
  EXPECT_TRUE(p.ranks.empty());
  const double fast = p.stage_seconds[0] + p.stage_seconds[1];
  const double slow_blocks = (p.bounds[4] - p.bounds[2]), fast_blocks = p.bounds[2];
  EXPECT_LT(slow_blocks, fast_blocks);
  EXPECT_GT(fast, 0);
  EXPECT_NE(Joined(p.notes).find("naive mapping (rank order): stage kinds "
                                 "rtx3090,rtx3090,rtx2080ti,rtx2080ti"),
            std::string::npos)
      << Joined(p.notes);
}

TEST(AutoPipeH, MappingsAreDeterministic) {
  const PlannerInput in = Commodity();
  const PlannedPipeline a = PlanAutoPipeH(in), b = PlanAutoPipeH(in);
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.bounds, b.bounds);
  EXPECT_EQ(a.notes, b.notes);
}

TEST(AutoPipeH, EveryGpuIsUsedOnce) {
  const PlannerInput in = Commodity();
  std::vector<int> ranks = PlanAutoPipeH(in).ranks;
  std::sort(ranks.begin(), ranks.end());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(ranks[i], i);
}

TEST(AutoPipeH, StageMajorOrderPutsAStagesReplicasSideBySide) {
  PlannerInput in = Commodity();
  in.data = 2;
  in.stages = 2;
  in.tensor = 2;
  // (replica, stage) -> tensor group s * data + r.
  EXPECT_EQ(StageMajorRanks(in), (std::vector<int>{0, 1, 4, 5, 2, 3, 6, 7}));
  EXPECT_EQ(NaiveRanks(in), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(AutoPipeH, TensorGroupsMustNotSpanServers) {
  PlannerInput in = Commodity();
  in.tensor = 3;
  in.data = 1;
  try {
    PlanAutoPipeH(in);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "autopipe-h: tensor group 1 spans servers (tensor 3 must divide the GPUs per "
                 "server)");
  }
}

}  // namespace
}  // namespace stratasim::planners
