// Expert-data parallelism (strategies/moe/ep_groups.h): the expert-parallel groups' all-to-alls,
// the expert-data-parallel gradient all-reduces, memory, per-group planning and the option's
// errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"
#include "core/hardware.h"
#include "core/scenario.h"
#include "models/memory.h"
#include "strategies/moe/ep_groups.h"
#include "strategies/moe/moe_setup.h"
#include "strategies/moe/moe_strategies.h"
#include "strategies/moe/moe_test_util.h"
#include "strategies/plan.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

using testing::PlanErrorOf;
using testing::SpecOf;

Scenario Moe8() { return testing::TinyMoe(); }
constexpr auto Kind = &testing::CollectivesOfKind;

MoeSetup SetupOf(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, MoeRoutingOptions());
  return ReadMoeSetup(s, spec, opt);
}

bool SameGroup(const std::vector<int>& ranks, int ep) {
  for (int r : ranks) {
    if (r / ep != ranks.front() / ep) return false;
  }
  return true;
}

TEST(ExpertDataParallelTest, GroupsAsDeepSpeedFormsThem) {
  // deepspeed/utils/groups.py, _create_expert_and_data_parallel: world 16, ep 2 gives
  // expert-parallel groups [0, 1], [2, 3], ... and expert-data-parallel [0, 2, ..., 14], [1, ...].
  EXPECT_EQ(ExpertParallelGroup(1, 2), (std::vector<int>{2, 3}));
  EXPECT_EQ(ExpertDataParallelGroup(1, 2, 16), (std::vector<int>{1, 3, 5, 7, 9, 11, 13, 15}));
  EXPECT_EQ(ExpertParallelGroup(3, 64).front(), 192);
  EXPECT_EQ(ExpertDataParallelGroup(5, 64, 256), (std::vector<int>{5, 69, 133, 197}));
}

TEST(ExpertDataParallelTest, DefaultIsOneGroupOverAllGpus) {
  const Scenario s = Moe8();
  const Plan p = PlanStrategy(s, SpecOf("x", "deepspeed-moe", {{"dispatch", "routed"}}));
  EXPECT_EQ(p.moe->expert_parallel, 8);
  EXPECT_EQ(p.moe->expert_data_parallel, 1);
  for (const Collective* c : Kind(p, CollectiveKind::kAllToAllV)) EXPECT_EQ(c->ranks.size(), 8u);
  // The only all-reduces are the non-expert ones, over all GPUs.
  for (const Collective* c : Kind(p, CollectiveKind::kAllReduce)) EXPECT_EQ(c->ranks.size(), 8u);
  EXPECT_NE(std::find(p.notes.begin(), p.notes.end(),
                      "8 experts over 8 GPUs, expert-parallel 8, expert-data-parallel 1, "
                      "0.5256 M parameters per expert, 128 tokens per GPU per layer"),
            p.notes.end())
      << ::testing::PrintToString(p.notes);
}

TEST(ExpertDataParallelTest, FewerExpertsThanGpusDefaultToGroupsOfTheExperts) {
  Scenario s = Moe8();
  s.model.experts = 4;
  const Plan p = PlanStrategy(s, SpecOf("x", "deepspeed-moe", {}));
  EXPECT_EQ(p.moe->expert_parallel, 4);
  EXPECT_EQ(p.moe->expert_data_parallel, 2);
}

TEST(ExpertDataParallelTest, AllToAllsStayInsideTheGroupWithTheGroupsRows) {
  const Scenario s = Moe8();
  const StrategySpec spec = SpecOf(
      "ep", "deepspeed-moe", {{"dispatch", "routed"}, {"skew", "1.2"}, {"expert_parallel", "4"}});
  const Plan p = PlanStrategy(s, spec);
  const MoeSetup st = SetupOf(s, spec);
  ASSERT_EQ(st.experts_per_rank, 2);
  const auto a2a = Kind(p, CollectiveKind::kAllToAllV);
  // Per iteration and layer: dispatch, combine, combine-grad, dispatch-grad, each per group.
  ASSERT_EQ(a2a.size(), 3u * 2 * 4 * 2);
  const double token_bytes = 256 * 2;  // hidden 256 in BF16
  for (int t = 0; t < 3; ++t) {
    for (int l = 0; l < 2; ++l) {
      for (int g = 0; g < 2; ++g) {
        const Collective& dispatch = *a2a[t * 16 + l * 4 + g];
        const Collective& combine = *a2a[t * 16 + l * 4 + 2 + g];
        EXPECT_EQ(dispatch.ranks, ExpertParallelGroup(g, 4));
        EXPECT_EQ(combine.ranks, ExpertParallelGroup(g, 4));
        ASSERT_EQ(dispatch.matrix.size(), 16u);
        for (int i = 0; i < 4; ++i) {
          for (int j = 0; j < 4; ++j) {
            // Group member j holds experts 2j and 2j + 1.
            const int r = g * 4 + i;
            const double want =
                (st.routing.at(t, l, r, 2 * j) + st.routing.at(t, l, r, 2 * j + 1)) * token_bytes;
            EXPECT_EQ(dispatch.matrix[i * 4 + j], want);
            EXPECT_EQ(combine.matrix[j * 4 + i], want);
          }
        }
      }
    }
  }
}

TEST(ExpertDataParallelTest, NoTokenCrossesAGroup) {
  // Closed form: each group's dispatches carry exactly its members' routed tokens, so summed
  // over the groups they carry every token once; a token sent across groups would be missing.
  const Scenario s = Moe8();
  for (const char* kind : {"deepspeed-moe", "fastermoe", "prophet", "pro-prophet"}) {
    std::map<std::string, std::string> options = {{"expert_parallel", "4"}, {"routing", "uniform"}};
    if (std::string(kind) == "deepspeed-moe") options["dispatch"] = "routed";
    if (std::string(kind) == "fastermoe") options["smart_schedule"] = "false";
    const Plan p = PlanStrategy(s, SpecOf("x", kind, options));
    double bytes = 0;
    for (const Collective& c : p.graph.collectives()) {
      if (c.kind != CollectiveKind::kAllToAllV) continue;
      EXPECT_TRUE(SameGroup(c.ranks, 4)) << kind;
      EXPECT_EQ(c.ranks.size(), 4u) << kind;
      for (double b : c.matrix) bytes += b;
    }
    // 3 iterations x 2 layers x 4 all-to-alls x 8 GPUs x 128 tokens x 512 bytes.
    EXPECT_EQ(bytes, 3.0 * 2 * 4 * 8 * 128 * 512) << kind;
  }
}

TEST(ExpertDataParallelTest, ExpertGradientsAllReducedOverTheCopies) {
  const Scenario s = Moe8();
  const StrategySpec spec = SpecOf("x", "deepspeed-moe", {{"expert_parallel", "4"}});
  const Plan p = PlanStrategy(s, spec);
  const MoeSetup st = SetupOf(s, spec);
  EXPECT_EQ(p.moe->expert_parallel, 4);
  EXPECT_EQ(p.moe->expert_data_parallel, 2);
  std::vector<const Collective*> edp;
  for (const Collective* c : Kind(p, CollectiveKind::kAllReduce)) {
    if (c->ranks.size() != 8u) edp.push_back(c);
  }
  // Per iteration and layer, one per group position: {i, i + 4}.
  ASSERT_EQ(edp.size(), 3u * 2 * 4);
  const int dp =
      static_cast<int>(std::find(p.graph.streams().begin(), p.graph.streams().end(), "dp") -
                       p.graph.streams().begin());
  for (size_t k = 0; k < edp.size(); ++k) {
    const int i = static_cast<int>(k % 4);
    EXPECT_EQ(edp[k]->ranks, (std::vector<int>{i, i + 4}));
    // Two experts per GPU of 2 h f + f + h parameters, BF16.
    EXPECT_EQ(edp[k]->bytes, 2 * st.expert_params * 2);
    EXPECT_EQ(st.expert_params, 2.0 * 256 * 1024 + 1024 + 256);
    for (TaskId m : edp[k]->members) {
      const Task& task = p.graph.task(m);
      EXPECT_EQ(task.stream, dp);
      EXPECT_EQ(task.category, "dp");
    }
  }
  // Adam waits for them; the backward of the layers below does not (they overlap it).
  for (const Task& task : p.graph.tasks()) {
    if (task.name.str() != "it0/adam" || task.rank != 1) continue;
    const TaskId member = edp[1]->members[0];  // it0, layer 1, rank 1
    EXPECT_NE(std::find(task.deps.begin(), task.deps.end(), member), task.deps.end());
  }
  for (const Task& task : p.graph.tasks()) {
    for (TaskId d : task.deps) {
      const bool on_edp = std::any_of(edp.begin(), edp.end(), [&](const Collective* c) {
        return std::find(c->members.begin(), c->members.end(), d) != c->members.end();
      });
      if (on_edp) {
        EXPECT_NE(task.name.str().find("adam"), std::string::npos) << task.name.str();
      }
    }
  }
}

TEST(ExpertDataParallelTest, MemoryCountsTheGroupsShareOfExperts) {
  const Scenario s = Moe8();
  auto weights = [&](const std::string& ep) {
    const Plan p = PlanStrategy(s, SpecOf("x", "deepspeed-moe", {{"expert_parallel", ep}}));
    double bytes = 0;
    for (const Task& t : p.graph.tasks()) {
      if (t.kind == TaskKind::kMemory && t.rank == 0 && t.category == "weights") {
        bytes += t.memory_delta_bytes;
      }
    }
    return bytes;
  };
  const MoeSetup st = SetupOf(s, SpecOf("x", "deepspeed-moe", {}));
  // ep 8: one expert per GPU; ep 2: four.
  EXPECT_EQ(weights("2") - weights("8"),
            AdamStateBytes(3 * st.expert_params, DType::kBF16).weights);
}

TEST(ExpertDataParallelTest, PlannersBalanceInsideEachGroup) {
  Scenario s = Moe8();
  s.model.sequence = 1024;  // enough tokens per expert for FasterMoE's model to shadow
  for (const char* kind : {"fastermoe", "prophet", "pro-prophet"}) {
    std::map<std::string, std::string> options = {
        {"expert_parallel", "4"}, {"skew", "2"}, {"drift", "0"}};
    // Pro-Prophet's stop rule, max - min device load < 3 x the mean (search_algorithm.py),
    // already holds in a group of 4 GPUs with 2 experts each at this skew: loosen it.
    if (std::string(kind) != "fastermoe") options["alpha"] = "1";
    const Plan p = PlanStrategy(s, SpecOf("x", kind, options));
    EXPECT_GT(p.moe->replicas, 0) << kind;
    for (const Collective* c : Kind(p, CollectiveKind::kBroadcast)) {
      EXPECT_TRUE(SameGroup(c->ranks, 4)) << kind;
    }
    for (const Collective* c : Kind(p, CollectiveKind::kReduce)) {
      EXPECT_TRUE(SameGroup(c->ranks, 4)) << kind;
    }
    for (const Collective* c : Kind(p, CollectiveKind::kAllToAllV)) {
      EXPECT_TRUE(SameGroup(c->ranks, 4)) << kind;
    }
  }
}

TEST(ExpertDataParallelTest, JoinGroupsIsBlockDiagonal) {
  const TokenMatrix t = {{5, 1, 0, 2}, {0, 3, 4, 1}, {2, 2, 2, 2}, {7, 0, 1, 0}};
  const LayerDecision d = PerExpertParallelGroup(t, 2, [](int, const TokenMatrix& rows) {
    return ReplicatedPlacement(rows, 2, {Replica{0, 0, {1}}}, false);
  });
  ASSERT_EQ(d.ranks, 4);
  // Group 0 (ranks 0, 1): rank 1 holds a copy of expert 0 but routes no token to it.
  EXPECT_EQ(d.a2a_tokens, (std::vector<double>{6, 2, 0, 0,  //
                                               3, 5, 0, 0,  //
                                               0, 0, 4, 4,  //
                                               0, 0, 0, 1}));
  // Group 1 (ranks 2, 3): rank 3 computes its 7 tokens for expert 0 on its copy.
  EXPECT_EQ(d.replica_tokens, (std::vector<double>{0, 0, 0, 7}));
  ASSERT_EQ(d.replicas.size(), 2u);
  EXPECT_EQ(d.replicas[1].owner, 2);
  EXPECT_EQ(d.replicas[1].holders, (std::vector<int>{3}));
  EXPECT_EQ(d.load_before, (std::vector<double>{9, 7, 11, 5}));
}

// The bundled 256-GPU scenario's groups, planned (not simulated) over one iteration.
TEST(ExpertDataParallelTest, Dgx256ScenarioPlansFourCopiesOfGroupsOf64) {
  Scenario s = LoadScenarioFile(std::string(STRATASIM_SOURCE_DIR) + "/scenarios/moe-dgx-256.yaml");
  s.training.warmup_iterations = 0;
  s.training.measured_iterations = 1;
  ASSERT_EQ(s.cluster.NumGpus(), 256);
  const Plan p = PlanStrategy(s, s.strategies.front());
  EXPECT_EQ(p.moe->expert_parallel, 64);
  EXPECT_EQ(p.moe->expert_data_parallel, 4);
  size_t a2a = 0, edp = 0;
  for (const Collective& c : p.graph.collectives()) {
    if (c.kind == CollectiveKind::kAllToAll) {
      ++a2a;
      EXPECT_EQ(c.ranks.size(), 64u);
    } else if (c.kind == CollectiveKind::kAllReduce && c.ranks.size() == 4u) {
      ++edp;
      EXPECT_EQ(c.ranks[1] - c.ranks[0], 64);
    }
  }
  EXPECT_EQ(a2a, 12u * 4 * 4);  // layers x (dispatch, combine, their gradients) x groups
  EXPECT_EQ(edp, 12u * 64);     // layers x group positions
}

TEST(ExpertDataParallelTest, BadInput) {
  const Scenario s = Moe8();
  EXPECT_EQ(PlanErrorOf(s, SpecOf("x", "deepspeed-moe", {{"expert_parallel", "3"}})),
            "s.yaml:9:5: strategies[0].options.expert_parallel = \"3\": must divide the number "
            "of GPUs (8)");
  Scenario six = s;
  six.model.experts = 6;
  EXPECT_EQ(PlanErrorOf(six, SpecOf("x", "prophet", {{"expert_parallel", "4"}})),
            "s.yaml:9:5: strategies[0].options.expert_parallel = \"4\": model.experts (6) must be "
            "a multiple of it");
  EXPECT_EQ(PlanErrorOf(six, SpecOf("x", "pro-prophet", {})),
            "s.yaml:8:5: strategies[0]: the default expert_parallel, model.experts (6), must "
            "divide the GPUs (8): set expert_parallel");
  EXPECT_EQ(
      PlanErrorOf(s, SpecOf("x", "fastermoe", {{"expert_parallel", "4"}, {"group_size", "8"}})),
      "s.yaml:9:5: strategies[0].options.group_size = \"8\": must divide expert_parallel "
      "(4)");
  EXPECT_EQ(PlanErrorOf(s, SpecOf("x", "deepspeed-moe", {{"expert_parallel", "0"}})),
            "s.yaml:9:5: strategies[0].options.expert_parallel = \"0\": must be an integer in "
            "[1, 1048576]");
}

}  // namespace
}  // namespace stratasim
