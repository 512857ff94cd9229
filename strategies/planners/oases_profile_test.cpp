#include "strategies/planners/oases_profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "strategies/planners/profile.h"
#include "strategies/test_scenario.h"

namespace stratasim::planners {
namespace {

using ::testing::HasSubstr;

// The tiny GPT (4 layers, hidden 256, sequence 128, 4 heads, BF16) on one server of 8 A100s
// joined by NVSwitch at 300 GB/s and 1 us.
Scenario Tiny() {
  Scenario s = testing::TinyGptScenario(testing::TinyGpt{});
  s.cluster.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  return s;
}

// Oases' trade-off on 8 GPUs: a group of degree t has 8 / t replicas beside it, so with 16
// samples per pass over the cluster it gets 2t of them.
OasesProfileRequest Request(bool recompute = true) {
  OasesProfileRequest r;
  r.degrees = {1, 2, 4};
  r.gpus = 8;
  r.group_samples = {2, 4, 8};
  r.recompute = recompute;
  return r;
}

// A ring all-reduce of `bytes` over t GPUs at 300 GB/s and 1 us per step.
double RingAllReduce(double bytes, int t) {
  return 2.0 * (t - 1) / t * bytes / 300e9 + 2.0 * (t - 1) * 1e-6;
}

TEST(OasesProfile, CandidatesDivideTheServerTheGpusAndTheHeads) {
  Scenario s = Tiny();
  EXPECT_EQ(OasesCandidateDegrees(s, 8), (std::vector<int>{1, 2, 4}));  // 4 heads
  s.model.heads = 8;
  EXPECT_EQ(OasesCandidateDegrees(s, 8), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(OasesCandidateDegrees(s, 4), (std::vector<int>{1, 2, 4}));
  s.model.kv_heads = 2;
  EXPECT_EQ(OasesCandidateDegrees(s, 8), (std::vector<int>{1, 2}));
}

TEST(OasesProfile, SubLayersAreTheLayerHalves) {
  const OasesProfile p = BuildOasesProfile(Tiny(), Request());
  ASSERT_EQ(p.SubLayers(), 8);
  EXPECT_EQ(p.names[0].substr(p.names[0].size() - 5), ".attn");
  EXPECT_EQ(p.names[1].substr(p.names[1].size() - 4), ".mlp");
  EXPECT_EQ(p.degrees, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(p.reshard_s.size(), 7u);
}

TEST(OasesProfile, ComputePlusCollectivesIsWhatTheMegatronProfileCharges) {
  // ProfileBlocks charges a block's kernels and its collectives in series; Oases separates
  // them to overlap them, so the two must add up to it.
  const Scenario s = Tiny();
  const OasesProfile p = BuildOasesProfile(s, Request());
  for (int a = 0; a < 3; ++a) {
    const int t = p.degrees[a];
    const Workload blocks = PlannerBlocks(s, t, false, Request().group_samples[a] / 2);
    const CostProfile megatron = ProfileBlocks(s, blocks, t, false);
    for (int i = 0; i < p.SubLayers(); ++i) {
      const BlockCost& b = megatron.costs[0][i + 1];  // after the embedding
      ASSERT_EQ(b.name, p.names[i]);
      const OasesCost& c = p.costs[i][a];
      EXPECT_NEAR(c.forward_s + c.forward_comm_s, b.forward_s, 1e-12) << b.name << " t=" << t;
      EXPECT_NEAR(c.backward_s + c.backward_comm_s, b.backward_s, 1e-12) << b.name;
      EXPECT_DOUBLE_EQ(c.recompute_s, c.forward_s);
    }
  }
}

TEST(OasesProfile, EachSubLayerHasOneAllReduceOfItsSubBatchEachWay) {
  const OasesProfile p = BuildOasesProfile(Tiny(), Request());
  for (int a = 0; a < 3; ++a) {
    const int t = p.degrees[a];
    // b/2 = t samples x 128 x 256 x 2 bytes.
    const double bytes = t * 128.0 * 256 * 2;
    for (int i = 0; i < p.SubLayers(); ++i) {
      const double expected = t == 1 ? 0 : RingAllReduce(bytes, t);
      EXPECT_NEAR(p.costs[i][a].forward_comm_s, expected, 1e-15) << p.names[i];
      EXPECT_NEAR(p.costs[i][a].backward_comm_s, expected, 1e-15) << p.names[i];
    }
  }
}

TEST(OasesProfile, ReshardIsAnAllGatherOfTheLargerGroupsActivation) {
  const OasesProfile p = BuildOasesProfile(Tiny(), Request());
  // 1 -> 4: 8 samples x 128 x 256 x 2 bytes gathered over 4 ranks, half a ring all-reduce.
  const double bytes = 8 * 128.0 * 256 * 2;
  const double gather = (4 - 1.0) / 4 * bytes / 300e9 + (4 - 1) * 1e-6;
  for (int i = 0; i < 7; ++i) {
    EXPECT_NEAR(p.reshard_s[i][0][2], gather, 1e-15);
    EXPECT_EQ(p.reshard_s[i][2][0], p.reshard_s[i][0][2]);
    for (int a = 0; a < 3; ++a) EXPECT_EQ(p.reshard_s[i][a][a], 0);
  }
  // 2 -> 4 gathers over 2 ranks, less than 1 -> 4.
  EXPECT_LT(p.reshard_s[0][1][2], p.reshard_s[0][0][2]);
}

TEST(OasesProfile, StatesDivideByTheDegreeAndRecomputationKeepsLess) {
  const OasesProfile with = BuildOasesProfile(Tiny(), Request(true));
  const OasesProfile without = BuildOasesProfile(Tiny(), Request(false));
  for (int i = 1; i + 1 < with.SubLayers(); ++i) {  // the ends also hold the embedding, head
    EXPECT_DOUBLE_EQ(with.costs[i][0].state_bytes, 2 * with.costs[i][1].state_bytes);
    EXPECT_DOUBLE_EQ(with.costs[i][0].state_bytes, 4 * with.costs[i][2].state_bytes);
    for (int a = 0; a < 3; ++a) {
      EXPECT_LT(with.costs[i][a].kept_bytes, without.costs[i][a].kept_bytes);
      EXPECT_EQ(without.costs[i][a].working_bytes, 0);
      EXPECT_EQ(without.costs[i][a].recompute_s, 0);
      // Recomputed, the backward holds again what the forward did not keep.
      EXPECT_EQ(with.costs[i][a].working_bytes, without.costs[i][a].kept_bytes);
    }
  }
  EXPECT_GT(with.costs.front()[0].state_bytes, with.costs[2][0].state_bytes);  // + embedding
}

TEST(OasesProfile, MemoryLimitIs95PercentOfTheGpu) {
  const Scenario s = Tiny();
  EXPECT_DOUBLE_EQ(OasesMemoryLimitBytes(s, 8), 0.95 * s.cluster.gpu_kinds[0].memory_bytes);
}

TEST(OasesProfile, BadRequestsAreNamed) {
  const Scenario s = Tiny();
  auto error = [&](const OasesProfileRequest& r) {
    try {
      BuildOasesProfile(s, r);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  OasesProfileRequest r = Request();
  r.group_samples = {2, 3, 8};
  EXPECT_EQ(error(r),
            "oases planner: a tensor group of degree 2 processes 3 samples per micro-batch: "
            "Oases splits it into two equal sub-batches, so it must be even and >= 2");
  r = Request();
  r.degrees = {1, 3, 4};
  EXPECT_EQ(error(r), "oases planner: degree 3: the degrees must increase and divide the 8 GPUs");
  r = Request();
  r.gpus = 16;
  EXPECT_EQ(error(r), "oases planner: the strategy's 16 GPUs must be 1 to the 8 of the cluster");
  r = Request();
  r.group_samples.pop_back();
  EXPECT_EQ(error(r), "oases planner: 2 group sizes for 3 degrees");
}

TEST(OasesProfile, PlansTheTinyGpt) {
  const Scenario s = Tiny();
  const OasesProfile p = BuildOasesProfile(s, Request());
  const OasesPlan plan = PlanOases(p, OasesMemoryLimitBytes(s, 8));
  EXPECT_EQ(plan.status, milp::Status::kOptimal);
  ASSERT_EQ(plan.degrees.size(), 8u);
  EXPECT_GT(plan.objective_s, 0);
  // A limit below the leanest plan: no feasible plan, with the figures.
  try {
    PlanOases(p, 1e6);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no feasible plan: the least memory any TP degree "
                                    "assignment of 8 sub-layers needs is "));
    EXPECT_THAT(e.what(), HasSubstr("per GPU (layer0.attn-layer3.mlp t=4), above the limit of "
                                    "976.56 KiB"));
  }
}

}  // namespace
}  // namespace stratasim::planners
