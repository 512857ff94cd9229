#include "strategies/moe/persistent_placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/hardware.h"
#include "strategies/moe/moe_setup.h"
#include "strategies/moe/moe_test_util.h"
#include "strategies/moe/pro_prophet.h"
#include "strategies/moe/routing_trace.h"
#include "strategies/plan.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

constexpr auto Model = &testing::UnitMoeCostModel;

// 4 devices, expert x on device x, every device sending 700 tokens to `hot` and 10 to the rest.
TokenMatrix HotOn(int hot) {
  TokenMatrix t(4, std::vector<double>(4, 10));
  for (auto& row : t) row[hot] = 700;
  return t;
}

TEST(PersistentPlacementTest, CopiesAddedAndChanged) {
  const std::vector<Replica> a = {{0, 0, {1, 2}}, {5, 2, {0}}};
  const std::vector<Replica> b = {{0, 0, {2, 3}}, {6, 3, {1}}};
  EXPECT_EQ(CopiesOf(a), (std::vector<ExpertCopy>{{0, 1}, {0, 2}, {5, 0}}));
  const std::vector<Replica> added = AddedCopies(a, b);
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[0].expert, 0);
  EXPECT_EQ(added[0].holders, std::vector<int>{3});
  EXPECT_EQ(added[1].expert, 6);
  EXPECT_EQ(added[1].holders, std::vector<int>{1});
  // Created (0, 3), (6, 1); dropped (0, 1), (5, 0).
  EXPECT_EQ(PlacementChanges(a, b), 4);
  EXPECT_EQ(PlacementChanges(a, a), 0);
  EXPECT_TRUE(AddedCopies(a, a).empty());
}

TEST(PersistentPlacementTest, NewCopiesReceiveParametersAndAdamState) {
  const CopyStateBytes b = ExpertCopyStateBytes(1000, DType::kFP16);
  EXPECT_EQ(b.params, 2000);      // FP16 weights
  EXPECT_EQ(b.optimizer, 12000);  // FP32 master weights, momentum, variance
  // T_Trans form, (holders + 1) / D x bytes / B per expert: expert 0 on all 4 devices, of
  // which device 3 is new; expert_bytes 1e5 at 1 GB/s.
  const std::vector<Replica> held = {{0, 0, {1, 2}}};
  const std::vector<Replica> now = {{0, 0, {1, 2, 3}}};
  const PersistentTransfers t =
      PersistentTransferSeconds(now, held, 4, Model(), CopyStateBytes{1e5, 6e5});
  EXPECT_DOUBLE_EQ(t.trans_s, 2.0 / 4 * 1e5 / 1e9);  // parameters to device 3
  // All-reduce among the 4 (twice the reduce's T_Agg) and device 3's optimizer state.
  EXPECT_DOUBLE_EQ(t.agg_s, 2 * 1e5 / 1e9 + 2.0 / 4 * 6e5 / 1e9);
  const PersistentTransfers kept =
      PersistentTransferSeconds(now, now, 4, Model(), CopyStateBytes{1e5, 6e5});
  EXPECT_EQ(kept.trans_s, 0);
  EXPECT_DOUBLE_EQ(kept.agg_s, 2 * 1e5 / 1e9);
}

TEST(PersistentPlacementTest, KeptWhileTheRoutingStaysSwitchedWhenTheHotExpertMoves) {
  const MoeCostModel m = Model();
  const CopyStateBytes state = ExpertCopyStateBytes(m.expert_bytes / 2, DType::kFP16);
  // Unscheduled: the transfers add in full (scheduled, they may hide behind the compute).
  const LayerSecondsFn seconds = [&](const LayerDecision& d, double trans_s, double agg_s) {
    return ProProphetLayerSeconds(d, m, false, trans_s, agg_s);
  };
  const std::vector<Replica> previous = ProProphetSearch(HotOn(0), 1, m, 3, false);
  ASSERT_FALSE(previous.empty());
  // The same routing: the fresh plan is the kept one, nothing to move.
  double regret_s = 0;
  const KeepOrReplanChoice same =
      KeepOrReplan(HotOn(0), 1, false, previous, ProProphetSearch(HotOn(0), 1, m, 3, false),
                   seconds, m, state, &regret_s);
  EXPECT_TRUE(same.kept);
  EXPECT_EQ(same.replan_s, 0);
  EXPECT_EQ(CopiesOf(same.replicas), CopiesOf(previous));
  // The hot expert moves to expert 2: the kept copies of expert 0 no longer help, the fresh
  // plan's copies of expert 2 save more than moving their state costs.
  const std::vector<Replica> fresh = ProProphetSearch(HotOn(2), 1, m, 3, false);
  ASSERT_FALSE(fresh.empty());
  ASSERT_EQ(fresh[0].expert, 2);
  const KeepOrReplanChoice moved =
      KeepOrReplan(HotOn(2), 1, false, previous, fresh, seconds, m, state, &regret_s);
  EXPECT_FALSE(moved.kept);
  EXPECT_FALSE(moved.partial);
  EXPECT_GT(moved.replan_s, 0);
  EXPECT_GT(moved.kept_s, moved.fresh_s + moved.replan_s);
  EXPECT_EQ(CopiesOf(moved.replicas), CopiesOf(fresh));
}

TEST(PersistentPlacementTest, KeepsWhenTheGainIsBelowTheCostOfMovingState) {
  // A cost model where copies of expert 1 (the fresh plan) make the layer 1 ms faster than
  // copies of expert 0 (the previous one), 2 ms faster than none, transfers adding in full.
  const MoeCostModel m = Model();
  const LayerSecondsFn seconds = [](const LayerDecision& d, double trans_s, double agg_s) {
    double base = 1.002;
    for (const Replica& r : d.replicas) base = std::min(base, r.expert == 1 ? 1.0 : 1.001);
    return base + trans_s + agg_s;
  };
  const std::vector<Replica> previous = {{0, 0, {1, 2, 3}}};
  const std::vector<Replica> fresh = {{1, 1, {0, 2, 3}}};
  // Both all-reduce 3 copies' gradients (0.2 ms); switching also sends expert 1's parameters
  // (0.1 ms) and optimizer state to 3 devices (1 ms): kept for one iteration (1 ms lost).
  double regret_s = 0;
  const KeepOrReplanChoice heavy = KeepOrReplan(HotOn(0), 1, false, previous, fresh, seconds, m,
                                                CopyStateBytes{1e5, 1e6}, &regret_s);
  EXPECT_TRUE(heavy.kept);
  EXPECT_NEAR(heavy.kept_s, 1.001 + 2e-4, 1e-12);
  EXPECT_NEAR(heavy.fresh_s, 1.0 + 2e-4, 1e-12);
  EXPECT_NEAR(heavy.replan_s, 1e-4 + 1e-3, 1e-12);
  EXPECT_NEAR(regret_s, 1e-3, 1e-12);  // what keeping cost this iteration
  // The next iteration, the same: keeping would have cost 2 ms in all, more than moving (1.1
  // ms): switch, and start counting again.
  const KeepOrReplanChoice later = KeepOrReplan(HotOn(0), 1, false, previous, fresh, seconds, m,
                                                CopyStateBytes{1e5, 1e6}, &regret_s);
  EXPECT_FALSE(later.kept);
  EXPECT_EQ(CopiesOf(later.replicas), CopiesOf(fresh));
  EXPECT_EQ(regret_s, 0);
  // With lighter state (0.9 ms in all to move) the first iteration switches already.
  const KeepOrReplanChoice light = KeepOrReplan(HotOn(0), 1, false, previous, fresh, seconds, m,
                                                CopyStateBytes{1e5, 8e5}, &regret_s);
  EXPECT_FALSE(light.kept);
  EXPECT_EQ(CopiesOf(light.replicas), CopiesOf(fresh));
}

TEST(PersistentPlacementTest, DropsStaleCopiesWhenSwitchingCostsMore) {
  // The previous placement's copy of expert 0 on device 3 now costs 1 ms (say it overloads
  // device 3); the fresh plan keeps the copy on device 1 and adds a copy of expert 2 worth
  // 0.1 ms, less than its state (0.55 ms) takes to send: keep only the copy on device 1.
  const MoeCostModel m = Model();
  const LayerSecondsFn seconds = [](const LayerDecision& d, double trans_s, double agg_s) {
    double base = 1.0;
    for (const Replica& r : d.replicas) {
      if (r.expert == 2) base -= 1e-4;
      if (r.expert == 0 && std::count(r.holders.begin(), r.holders.end(), 3) > 0) base += 1e-3;
    }
    return base + trans_s + agg_s;
  };
  const std::vector<Replica> previous = {{0, 0, {1, 3}}};
  const std::vector<Replica> fresh = {{0, 0, {1}}, {2, 2, {0}}};
  double regret_s = 0;
  const KeepOrReplanChoice c = KeepOrReplan(HotOn(0), 1, false, previous, fresh, seconds, m,
                                            CopyStateBytes{1e5, 1e6}, &regret_s);
  EXPECT_FALSE(c.kept);
  EXPECT_TRUE(c.partial);
  EXPECT_EQ(CopiesOf(c.replicas), (std::vector<ExpertCopy>{{0, 1}}));
  EXPECT_LT(c.partial_s, c.kept_s);
  EXPECT_LT(c.partial_s, c.fresh_s + c.replan_s);
}

LayerDecision WithReplicas(std::vector<Replica> r) {
  LayerDecision d;
  d.replicas = std::move(r);
  return d;
}

TEST(PersistentPlacementTest, FiguresOverTwoIterations) {
  // Layer 0 moves a copy of expert 0 from device 2 to device 3; layer 1 keeps its copy.
  const std::vector<std::vector<LayerDecision>> decisions = {
      {WithReplicas({{0, 0, {1, 2}}}), WithReplicas({{1, 1, {0}}})},
      {WithReplicas({{0, 0, {1, 3}}}), WithReplicas({{1, 1, {0}}})},
  };
  MoeFigures f;
  FillPlacementFigures(decisions, 0, true, &f);
  // Iteration 0 creates 2 + 1 copies; iteration 1 creates (0, 3) and drops (0, 2).
  EXPECT_DOUBLE_EQ(f.placement_changes, (3 + 2) / 2.0);
  // Iteration 1: layer 1 kept, layer 0 changed.
  EXPECT_DOUBLE_EQ(f.placement_kept_fraction, 0.5);
  // Measured iteration 1 only.
  FillPlacementFigures(decisions, 1, true, &f);
  EXPECT_DOUBLE_EQ(f.placement_changes, 2);
  EXPECT_DOUBLE_EQ(f.placement_kept_fraction, 0.5);
  // Without persistence every copy is sent again: nothing kept, the same changes of plan.
  FillPlacementFigures(decisions, 0, false, &f);
  EXPECT_DOUBLE_EQ(f.placement_changes, 2.5);
  EXPECT_EQ(f.placement_kept_fraction, 0);
}

// 8 A100s on NVSwitch, a 2-layer MoE with 8 experts (moe_strategies_test's TinyMoe) and 1,024
// tokens per GPU, 1 warm-up and 2 measured iterations, replaying a trace in which every iteration
// sends 800 of each GPU's tokens to expert 0 and 32 to each other expert: iteration 1's plan
// (from iteration 0's counts) creates copies of expert 0, iteration 2's finds them still best.
Scenario StableHotExpert(const std::string& dir) {
  Scenario s = testing::TinyMoe();
  s.model.sequence = 1024;  // enough tokens for copies to pay for their state
  std::filesystem::create_directories(dir);
  s.file = dir + "/s.yaml";
  Routing r(3, 2, 8, 8);
  for (int it = 0; it < 3; ++it) {
    for (int l = 0; l < 2; ++l) {
      for (int rank = 0; rank < 8; ++rank) {
        for (int x = 0; x < 8; ++x) r.at(it, l, rank, x) = x == 0 ? 800 : 32;
      }
    }
  }
  std::ofstream(dir + "/t.txt") << RoutingTraceText(r);
  return s;
}

std::string NameOf(const Plan& p, const Collective& c) {
  return p.graph.task(c.members.front()).name.str();
}

// The collectives whose first member's name starts with `prefix`.
std::vector<const Collective*> Named(const Plan& p, const std::string& prefix) {
  std::vector<const Collective*> out;
  for (const Collective& c : p.graph.collectives()) {
    if (NameOf(p, c).rfind(prefix, 0) == 0) out.push_back(&c);
  }
  return out;
}

TEST(PersistentGraphTest, KeptCopiesAreNotSentAgainAndAllReduceTheirGradients) {
  const Scenario s = StableHotExpert(::testing::TempDir() + "persistent_graph_test");
  for (const char* kind : {"prophet", "pro-prophet"}) {
    const StrategySpec spec = testing::SpecOf(
        kind, kind, {{"routing", "trace"}, {"trace", "t.txt"}, {"persistent", "true"}});
    const Plan p = PlanStrategy(s, spec);
    OptionReader opt(spec, MoeRoutingOptions());
    const double params = ReadMoeSetup(s, spec, opt).expert_params;
    double copies = 0;
    for (int l = 0; l < 2; ++l) {
      const std::string it1 = "it1/layer" + std::to_string(l);
      const std::string it2 = "it2/layer" + std::to_string(l);
      const auto agg1 = Named(p, it1 + "/agg/");
      ASSERT_FALSE(agg1.empty()) << kind;
      EXPECT_EQ(NameOf(p, *agg1[0]), it1 + "/agg/expert0") << kind;  // the hot expert
      for (const Collective* agg : agg1) {
        const std::string expert = NameOf(p, *agg).substr((it1 + "/agg/").size());
        const std::vector<int> members = agg->ranks;
        ASSERT_GT(members.size(), 1u) << kind << " " << expert;
        EXPECT_EQ(agg->kind, CollectiveKind::kAllReduce) << kind << " " << expert;
        copies += members.size() - 1;
        // Iteration 1 creates the copies: parameters (BF16, split in parts by Pro-Prophet's
        // scheduler) before the forward, Adam's FP32 state (12 bytes per parameter) before the
        // step, to the same holders.
        double param_bytes = 0;
        for (const Collective* c : Named(p, it1 + "/trans/" + expert)) {
          EXPECT_EQ(c->kind, CollectiveKind::kBroadcast) << kind << " " << expert;
          EXPECT_EQ(c->ranks, members) << kind << " " << expert;
          param_bytes += c->bytes;
        }
        EXPECT_DOUBLE_EQ(param_bytes, 2 * params) << kind << " " << expert;
        const auto state = Named(p, it1 + "/state/" + expert);
        ASSERT_EQ(state.size(), 1u) << kind << " " << expert;
        EXPECT_EQ(state[0]->ranks, members) << kind << " " << expert;
        EXPECT_DOUBLE_EQ(state[0]->bytes, 12 * params) << kind << " " << expert;
        // Iteration 2 keeps them: the gradients all-reduced among the same GPUs.
        const auto agg2 = Named(p, it2 + "/agg/" + expert);
        ASSERT_EQ(agg2.size(), 1u) << kind << " " << expert;
        EXPECT_EQ(agg2[0]->kind, CollectiveKind::kAllReduce) << kind << " " << expert;
        EXPECT_EQ(agg2[0]->ranks, members) << kind << " " << expert;
      }
      // ... and sends nothing.
      EXPECT_EQ(Named(p, it2 + "/agg/").size(), agg1.size()) << kind;
      EXPECT_TRUE(Named(p, it2 + "/trans/").empty()) << kind;
      EXPECT_TRUE(Named(p, it2 + "/state/").empty()) << kind;
    }
    // Over the 2 measured iterations: the copies created once, kept in iteration 2 (both
    // layers); iteration 1 moved 2 + 12 bytes per parameter and copy more than re-sending.
    EXPECT_DOUBLE_EQ(p.moe->placement_changes, copies / 2) << kind;
    EXPECT_DOUBLE_EQ(p.moe->placement_kept_fraction, 1) << kind;
    EXPECT_DOUBLE_EQ(p.moe->transfer_bytes_saved, -(2 + 12) * params * copies / 2) << kind;
    // A holder keeps each copy's weights, gradients and Adam state (16 bytes per parameter in
    // BF16 mixed precision) from creation on; the owner holds none.
    std::vector<double> replica_bytes(8, 0);
    for (const Task& task : p.graph.tasks()) {
      if (task.kind == TaskKind::kMemory && task.category.str() == "replicas") {
        replica_bytes[task.rank] += task.memory_delta_bytes;
      }
    }
    EXPECT_EQ(replica_bytes[0], 0) << kind;
    double held = 0;
    for (double b : replica_bytes) held += b;
    EXPECT_DOUBLE_EQ(held, 16 * params * copies) << kind;

    // Without persistence iteration 2 sends the copies again and reduces to the owner.
    const Plan resent = PlanStrategy(
        s, testing::SpecOf(kind, kind,
                           {{"routing", "trace"}, {"trace", "t.txt"}, {"persistent", "false"}}));
    const auto agg = Named(resent, "it2/layer0/agg/expert0");
    ASSERT_EQ(agg.size(), 1u) << kind;
    EXPECT_EQ(agg[0]->kind, CollectiveKind::kReduce) << kind;
    EXPECT_FALSE(Named(resent, "it2/layer0/trans/expert0").empty()) << kind;
    EXPECT_TRUE(Named(resent, "it1/layer0/state/").empty()) << kind;
    EXPECT_EQ(resent.moe->placement_kept_fraction, 0) << kind;
    EXPECT_EQ(resent.moe->transfer_bytes_saved, 0) << kind;
    EXPECT_DOUBLE_EQ(resent.moe->placement_changes, copies / 2) << kind;
  }
}

TEST(PersistentGraphTest, PersistentIsAFlag) {
  const Scenario s = StableHotExpert(::testing::TempDir() + "persistent_flag_test");
  for (const char* kind : {"prophet", "pro-prophet"}) {
    try {
      PlanStrategy(s, testing::SpecOf(kind, kind, {{"persistent", "sometimes"}}));
      ADD_FAILURE() << kind << ": no error";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()),
                "s.yaml:9:5: strategies[0].options.persistent = \"sometimes\": must be true or "
                "false")
          << kind;
    }
  }
}

}  // namespace
}  // namespace stratasim
