#include "strategies/planners/baselines.h"

#include <gtest/gtest.h>

#include "strategies/test_scenario.h"

namespace stratasim::planners {
namespace {

Scenario Tiny(int servers = 1) {
  testing::TinyGpt t;
  t.servers = servers;
  t.global_batch = 16;
  Scenario s = testing::TinyGptScenario(t);
  s.cluster.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  return s;
}

bool NoteHas(const Plan& p, const std::string& text) {
  for (const std::string& n : p.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(Baselines, DapplePlansEightGpusAndSaysWhatItChose) {
  const Scenario s = Tiny();
  const Plan p = PlanDappleStrategy(s, testing::SpecOf("d", "dapple", {{"stages", "2"}}));
  EXPECT_FALSE(p.graph.tasks().empty());
  EXPECT_TRUE(NoteHas(p, "dapple: ")) << p.notes.front();
  EXPECT_TRUE(
      NoteHas(p, "dapple partition (sub-layer blocks per stage, embedding and head included)"));
  // With choose_stages false it keeps 2 stages x 4 replicas.
  const Plan fixed = PlanDappleStrategy(
      s, testing::SpecOf("d", "dapple", {{"stages", "2"}, {"choose_stages", "false"}}));
  EXPECT_TRUE(NoteHas(fixed, "dapple: 2 stages x 4 replicas")) << fixed.notes.front();
}

TEST(Baselines, PiperPlansEightGpusAndSaysWhatItChose) {
  const Scenario s = Tiny();
  const Plan p = PlanPiperStrategy(s, testing::SpecOf("p", "piper", {{"stages", "2"}}));
  EXPECT_FALSE(p.graph.tasks().empty());
  EXPECT_TRUE(NoteHas(p, "piper: (t, d) tried: t1 d1 S8")) << p.notes[1];
  // Given degrees only: tensor 2 x data 2 x 2 stages.
  const Plan fixed = PlanPiperStrategy(
      s, testing::SpecOf("p", "piper",
                         {{"stages", "2"}, {"tensor", "2"}, {"choose_degrees", "false"}}));
  EXPECT_TRUE(NoteHas(fixed, "piper: tensor 2 x data 2 x 2 stages")) << fixed.notes.front();
}

TEST(Baselines, BadOptionsAreLocatedErrors) {
  const Scenario s = Tiny();
  EXPECT_EQ(testing::PlanErrorOf(
                s, testing::SpecOf("d", "dapple", {{"stages", "2"}, {"rank_order", "tdp"}})),
            "s.yaml:9:5: strategies[0].options.rank_order = \"tdp\": dapple places the stages on "
            "the GPUs itself (its placement policies)");
  EXPECT_EQ(testing::PlanErrorOf(
                s, testing::SpecOf("p", "piper", {{"stages", "2"}, {"rank_order", "tdp"}})),
            "s.yaml:9:5: strategies[0].options.rank_order = \"tdp\": piper plans for the default "
            "rank order (tpd)");
  EXPECT_EQ(
      testing::PlanErrorOf(
          s, testing::SpecOf("p", "piper",
                             {{"stages", "2"}, {"choose_degrees", "false"}, {"max_tensor", "2"}})),
      "s.yaml:9:5: strategies[0].options.max_tensor = \"2\": only applies with "
      "choose_degrees: true");
  const std::string placements = testing::PlanErrorOf(
      s, testing::SpecOf("d", "dapple", {{"stages", "2"}, {"max_placements", "0"}}));
  EXPECT_NE(placements.find("s.yaml:9:5: strategies[0].options.max_placements = \"0\""),
            std::string::npos)
      << placements;
}

TEST(Baselines, NothingThatFitsIsAnError) {
  Scenario s = Tiny();
  s.cluster.gpu_kinds.front().memory_bytes = 1e6;  // 1 MB GPUs hold no stage
  try {
    PlanDappleStrategy(s, testing::SpecOf("d", "dapple", {{"stages", "2"}}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dapple: no plan fits"), std::string::npos) << e.what();
  }
  try {
    PlanPiperStrategy(s, testing::SpecOf("p", "piper", {{"stages", "2"}}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("piper: no plan fits in memory"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace stratasim::planners
