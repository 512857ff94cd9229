#include "strategies/planners/hph.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "strategies/planners/hph_test_util.h"

namespace stratasim::planners {
namespace {

using testing::Input;
using testing::Servers;
using testing::TwoKindProfile;

// One slow server (GPUs 0-3) and one fast server (GPUs 4-7), plenty of memory; 2 stages x 4
// replicas, 12 blocks, the slow kind twice as slow.
PlannerInput Mixed() {
  return Input(TwoKindProfile(12, 2), Servers({1, 0}, {1e9, 1e9}, 4), 2, 1, 4, 8);
}

TEST(Hph, PlacesStagesOnOneServerEachAndSplitsBySpeed) {
  const PlannedPipeline p = PlanHph(Mixed());
  EXPECT_EQ(p.stages, 2);
  EXPECT_EQ(p.data, 4);
  // Fast kind first (both orders predict the same; the first is kept): stage 0 on server 1.
  EXPECT_EQ(p.ranks, (std::vector<int>{4, 0, 5, 1, 6, 2, 7, 3}));
  EXPECT_EQ(p.bounds, (std::vector<int>{0, 8, 12}));
  EXPECT_EQ(p.stage_seconds, (std::vector<double>{24, 24}));
  EXPECT_TRUE(p.recompute.empty());
  EXPECT_EQ(p.schedule, "1f1b");
  // Fill 24 + 24, then 7 more of the slowest stage.
  EXPECT_DOUBLE_EQ(p.predicted_seconds, 48 + 7 * 24);
  EXPECT_GE(p.planning_seconds, 0);
  ASSERT_EQ(p.notes.size(), 4u);
  EXPECT_EQ(p.notes[0],
            "hph: designer's layout, stages on fast x1, slow x1; each stage's 4 GPUs within at "
            "most 1 server(s)");
  EXPECT_EQ(p.notes[1],
            "hph: speed-weighted partition 8,4 blocks; predicted stage times per micro-batch "
            "24000.00, 24000.00 ms");
  EXPECT_EQ(p.notes[2].rfind("hph: recomputation none: every stage fits; predicted peak", 0), 0u);
}

TEST(Hph, SpeedWeightedBeatsTheEvenSplitAndTheDefaultLayoutOnMixedGpus) {
  const PlannedPipeline hph = PlanHph(Mixed());
  HphSettings even;
  even.speed_weighted = false;
  const PlannedPipeline blind = PlanHph(Mixed(), even);
  EXPECT_EQ(blind.bounds, (std::vector<int>{0, 6, 12}));
  EXPECT_EQ(blind.stage_seconds, (std::vector<double>{18, 36}));
  EXPECT_LT(hph.predicted_seconds, blind.predicted_seconds);
  HphSettings plain;
  plain.topology = false;
  const PlannedPipeline def = PlanHph(Mixed(), plain);
  // Every stage of the default layout has a slow GPU: the split is even and all slow.
  EXPECT_TRUE(def.ranks.empty());
  EXPECT_EQ(def.stage_seconds, (std::vector<double>{36, 36}));
  EXPECT_LT(hph.predicted_seconds, def.predicted_seconds);
  EXPECT_EQ(def.notes[0].rfind("hph: default layout, stages on slow x2", 0), 0u);
}

TEST(Hph, RecomputesOnlyOnTheStageThatWouldOverflowAndSchedulesItIntoTheBubbles) {
  // The fast server's GPUs have 700 B, the slow one's plenty; 8 blocks, even speeds.
  PlannerInput in = Input(TwoKindProfile(8, 1), Servers({1, 0}, {1e9, 700}, 4), 2, 1, 4, 4);
  HphSettings s;
  s.recompute_schedule = "pre_recompute";
  const PlannedPipeline p = PlanHph(in, s);
  // The slow kind (plenty of memory) takes stage 0, which holds two micro-batches in flight: no
  // recomputation anywhere (kind order (1, 0) predicts less than (0, 1), which recomputes).
  EXPECT_TRUE(p.recompute.empty());
  EXPECT_EQ(p.ranks, (std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(p.schedule, "1f1b");

  // With one kind only, the memory-poor stage 0 must recompute.
  in = Input(TwoKindProfile(8, 1), Servers({0, 0}, {700, 1e9}, 4), 2, 1, 4, 4);
  const PlannedPipeline r = PlanHph(in, s);
  EXPECT_EQ(r.bounds, (std::vector<int>{0, 4, 8}));
  EXPECT_EQ(r.recompute, (std::vector<bool>{true, true, false, false, false, false, false, false}));
  EXPECT_EQ(r.schedule, "pre_recompute");
  EXPECT_EQ(r.notes[2].rfind("hph: recomputation only where memory would overflow (stage 0: 2 "
                             "blocks), schedule pre_recompute; ",
                             0),
            0u);
}

TEST(Hph, WithoutExplicitMappingsOnlyLayoutsARankOrderNumbersArePlanned) {
  HphSettings s;
  s.explicit_ranks = false;
  const PlannedPipeline p = PlanHph(Mixed(), s);
  // The fast-first layout puts stage 0 on GPUs 4-7, which no rank order does; slow-first is
  // "tdp" (stage 0 on GPUs 0-3), balanced on the kinds in that order.
  EXPECT_EQ(p.ranks, (std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(p.bounds, (std::vector<int>{0, 4, 12}));
  EXPECT_EQ(p.notes.back(),
            "hph: 1 designed layout(s) left out: no rank order numbers them and explicit "
            "mappings are off");
}

TEST(Hph, APlanThatDoesNotFitIsNeverChosen) {
  // Every stage of every layout overflows 100 B.
  const PlannerInput in = Input(TwoKindProfile(8, 2), Servers({0, 1}, {100, 100}, 1), 2, 1, 1, 4);
  try {
    PlanHph(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "hph: no layout and split of the 8 blocks over 2 stages fits in memory, even "
                 "recomputing every recomputable block");
  }
  HphSettings off;
  off.recompute = false;
  try {
    PlanHph(Input(TwoKindProfile(8, 1), Servers({0, 0}, {500, 500}, 1), 2, 1, 1, 4), off);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "hph: no layout and split of the 8 blocks over 2 stages fits in memory without "
                 "recomputation (recompute is off)");
  }
}

TEST(Hph, IsDeterministic) {
  PlannedPipeline a = PlanHph(Mixed()), b = PlanHph(Mixed());
  a.planning_seconds = b.planning_seconds = 0;
  a.notes.pop_back();
  b.notes.pop_back();
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.bounds, b.bounds);
  EXPECT_EQ(a.notes, b.notes);
}

}  // namespace
}  // namespace stratasim::planners
