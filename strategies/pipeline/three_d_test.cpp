// Data x tensor x pipeline parallelism (kind "3d", or "pipeline" with `tensor`): rank layout,
// the tensor-parallel traffic of each stage, scatter/gather of the boundary tensors, the
// data-parallel groups and their overlap, per-stage recomputation, and the errors.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "strategies/pipeline/pipeline.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

Scenario Small(int gpus, int global_batch, int heads = 4) {
  return testing::TinyGptScenario({gpus, 1, global_batch, 1, 4, heads});
}

StrategySpec ThreeD(std::map<std::string, std::string> options) {
  return testing::SpecOf("3d", "3d", options);
}

std::string ErrorOf(const Scenario& s, const StrategySpec& spec) {
  return testing::PlanErrorOf(s, spec);
}

TEST(ThreeD, WrongProductIsRejectedWithTheNumbers) {
  const std::string e =
      ErrorOf(Small(8, 8), ThreeD({{"tensor", "2"}, {"stages", "2"}, {"data", "3"}}));
  EXPECT_NE(e.find("s.yaml:9:5"), std::string::npos) << e;
  EXPECT_NE(e.find("strategies[0].options.data"), std::string::npos) << e;
  EXPECT_NE(e.find("tensor (2) x stages (2) x data (3) = 12 must equal the GPU count (8)"),
            std::string::npos)
      << e;
}

TEST(ThreeD, TensorDegreeMustDivideTheHeads) {
  const std::string e =
      ErrorOf(Small(8, 8, 4), ThreeD({{"tensor", "8"}, {"stages", "1"}, {"data", "1"}}));
  EXPECT_NE(e.find("strategies[0].options.tensor"), std::string::npos) << e;
  EXPECT_NE(e.find("tensor degree t=8 must divide the model's attention heads (4)"),
            std::string::npos)
      << e;
}

TEST(ThreeD, DegreesAreRequiredAndOptionsChecked) {
  const Scenario s = Small(8, 8);
  EXPECT_NE(ErrorOf(s, ThreeD({{"tensor", "2"}, {"stages", "2"}}))
                .find("options.data: is required: the data-parallel degree"),
            std::string::npos);
  EXPECT_NE(ErrorOf(s, ThreeD({{"stages", "2"}, {"data", "2"}})).find("tensor"), std::string::npos);
  EXPECT_NE(ErrorOf(s, testing::SpecOf("pp", "pipeline",
                                       {{"stages", "2"}, {"sequence_parallel", "true"}}))
                .find("only applies with tensor > 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf(s, testing::SpecOf("pp", "pipeline", {{"stages", "3"}, {"tensor", "2"}}))
                .find("tensor (2) x stages (3) = 6 must divide the GPU count (8)"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(s, ThreeD({{"tensor", "2"}, {"stages", "2"}, {"data", "2"}, {"rank_order", "tdx"}}))
          .find("must be one of: tpd, tdp, ptd, pdt, dtp, dpt"),
      std::string::npos);
  EXPECT_NE(ErrorOf(s, ThreeD({{"tensor", "2"},
                               {"stages", "2"},
                               {"data", "2"},
                               {"recompute", "full,none,none"}}))
                .find("gives 3 choices but the pipeline has 2 stages"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(s, ThreeD({{"tensor", "2"}, {"stages", "2"}, {"data", "2"}, {"recompute", "fast"}}))
          .find("\"fast\" is not none, selective or full"),
      std::string::npos);
  EXPECT_EQ(ErrorOf(s, ThreeD({{"tensor", "2"}, {"stages", "2"}, {"data", "2"}})), "no error");
}

struct Traffic {
  std::map<std::string, int> collectives;  // by category
  std::set<std::vector<int>> tp_groups, dp_groups;
  int sends = 0;
  double send_bytes = 0;
  double gather_bytes = 0;
};

Traffic TrafficOf(const Plan& plan) {
  Traffic t;
  for (const Task& task : plan.graph.tasks()) {
    if (task.kind == TaskKind::kSend) {
      ++t.sends;
      t.send_bytes = task.bytes;
    }
    if (task.kind != TaskKind::kCollective) continue;
    const Collective& c = plan.graph.collectives()[task.collective];
    if (task.rank != c.ranks.front()) continue;  // count each collective once
    ++t.collectives[task.category.str()];
    if (task.category == "tp") t.tp_groups.insert(c.ranks);
    if (task.category == "dp") t.dp_groups.insert(c.ranks);
    if (task.category == "pp") t.gather_bytes = c.bytes;
  }
  return t;
}

TEST(ThreeD, StagesAreTensorParallelAndSendsAreScatteredThenGathered) {
  // 8 GPUs: t = 2, p = 2, d = 2; 8 samples of 1: m = 4 micro-batches per replica.
  const Scenario s = Small(8, 8);
  const Plan plan = PlanPipeline(s, ThreeD({{"tensor", "2"}, {"stages", "2"}, {"data", "2"}}));
  plan.graph.Validate();
  const Traffic t = TrafficOf(plan);
  const int m = 4, d = 2, layers = 4;
  // Per micro-batch and replica: 2 all-reduces per transformer layer forward and 2 backward,
  // the vocabulary-parallel embedding's forward and the logits' input gradient.
  EXPECT_EQ(t.collectives.at("tp"), (4 * layers + 2) * m * d);
  EXPECT_EQ(t.tp_groups, (std::set<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  // Rank order tpd: replica 1's stages sit 4 ranks further.
  EXPECT_EQ(t.dp_groups, (std::set<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // One boundary, crossed forward and backward, by each of the t GPUs with 1/t of b s h.
  const double boundary = 1.0 * 128 * 256 * 2;  // b s h x BF16
  EXPECT_EQ(t.sends, 2 * 2 * m * d);
  EXPECT_DOUBLE_EQ(t.send_bytes, boundary / 2);
  EXPECT_EQ(t.collectives.at("pp"), 2 * m * d);  // the receiving group's all-gathers
  EXPECT_DOUBLE_EQ(t.gather_bytes, boundary);

  const Plan no_sg = PlanPipeline(
      s, ThreeD({{"tensor", "2"}, {"stages", "2"}, {"data", "2"}, {"scatter_gather", "false"}}));
  EXPECT_DOUBLE_EQ(TrafficOf(no_sg).send_bytes, boundary);
  EXPECT_EQ(TrafficOf(no_sg).collectives.count("pp"), 0u);
  // Sequence parallelism: the boundary is already split along the sequence, no gather.
  const Plan sp = PlanPipeline(
      s, ThreeD({{"tensor", "2"}, {"stages", "2"}, {"data", "2"}, {"sequence_parallel", "true"}}));
  EXPECT_DOUBLE_EQ(TrafficOf(sp).send_bytes, boundary / 2);
  EXPECT_EQ(TrafficOf(sp).collectives.count("pp"), 0u);
}

TEST(ThreeD, RankOrderMovesTheGroups) {
  const Plan plan = PlanPipeline(
      Small(8, 8),
      ThreeD({{"tensor", "2"}, {"stages", "2"}, {"data", "2"}, {"rank_order", "dtp"}}));
  const Traffic t = TrafficOf(plan);
  EXPECT_EQ(t.dp_groups, (std::set<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(t.tp_groups, (std::set<std::vector<int>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(plan.rank_stage, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
}

TEST(ThreeD, DataParallelAllReduceOverlapsOrWaitsForTheFlush) {
  const Scenario s = Small(8, 8);
  const StrategySpec base = ThreeD({{"tensor", "2"}, {"stages", "2"}, {"data", "2"}});
  StrategySpec flush = base;
  flush.options["dp_overlap"] = OptionValue{"false", {}};
  // Without overlap: one all-reduce of the whole stage per tensor index, after the stage's last
  // backward on every replica.
  const Plan waits = PlanPipeline(s, flush);
  EXPECT_EQ(TrafficOf(waits).collectives.at("dp"), 2 * 2);
  // With overlap, the all-reduce of a bucket depends on the backward that finished it, not on
  // the stage's last kernel: on stage 0 (layers first) the embedding's gradient is final last.
  const Plan overlaps = PlanPipeline(s, base);
  const TaskGraph& g = overlaps.graph;
  for (const Task& task : g.tasks()) {
    if (task.kind != TaskKind::kCollective || task.category != "dp") continue;
    ASSERT_FALSE(task.deps.empty());
    bool after_backward = false;
    for (TaskId dep : task.deps) after_backward |= g.tasks()[dep].phase == Phase::kBackward;
    EXPECT_TRUE(after_backward) << task.name;
  }
}

TEST(ThreeD, RecomputationIsChosenPerStage) {
  const Scenario s = Small(4, 4);
  const Plan plan = PlanPipeline(
      s, testing::SpecOf("pp", "pipeline", {{"stages", "2"}, {"recompute", "full, none"}}));
  std::map<int, int> recomputed;  // per stage
  for (const Task& task : plan.graph.tasks()) {
    if (task.phase == Phase::kRecompute) ++recomputed[plan.rank_stage[task.rank]];
  }
  EXPECT_GT(recomputed[0], 0);
  EXPECT_EQ(recomputed.count(1), 0u);
}

}  // namespace
}  // namespace stratasim
