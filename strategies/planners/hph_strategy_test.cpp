#include "strategies/planners/hph_strategy.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

// A tiny GPT on one server of 8 A100s.
Scenario Small() {
  Scenario s = testing::TinyGptScenario({8, 1, 16, 1, 4, 4});
  s.cluster.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  return s;
}

StrategySpec Spec(std::map<std::string, std::string> options) {
  return testing::SpecOf("h", "hph", options);
}

bool HasNote(const Plan& p, const std::string& prefix) {
  return std::any_of(p.notes.begin(), p.notes.end(),
                     [&](const std::string& n) { return n.rfind(prefix, 0) == 0; });
}

TEST(HphStrategy, PlansAndSaysWhatItChose) {
  const Plan p = PlanStrategy(Small(), Spec({{"stages", "2"}}));
  EXPECT_FALSE(p.graph.tasks().empty());
  EXPECT_TRUE(HasNote(p, "hph: designer's layout, stages on A100-SXM4-80GB x2")) << p.notes[0];
  EXPECT_TRUE(HasNote(p, "hph: speed-weighted partition "));
  EXPECT_TRUE(HasNote(p, "hph: recomputation none: every stage fits"));
  // The wall-clock planning time goes to the pipeline figures, never to the notes.
  EXPECT_FALSE(HasNote(p, "planned in"));
  ASSERT_TRUE(p.pipeline);
  EXPECT_GE(p.pipeline->planning_s, 0);
  // One kind on one server: the designer's stages of 4 consecutive GPUs are rank order tdp.
  EXPECT_TRUE(HasNote(p, "hph: the designer's layout is rank order tdp"));
  EXPECT_TRUE(
      HasNote(p, "hph partition (sub-layer blocks per stage, embedding and head included): "));
}

TEST(HphStrategy, TheMechanismsCanBeTurnedOffForComparison) {
  const Plan p = PlanStrategy(Small(), Spec({{"stages", "2"},
                                             {"mapping", "default"},
                                             {"partition", "even"},
                                             {"rank_order", "tpd"},
                                             {"recompute", "off"}}));
  EXPECT_TRUE(HasNote(p, "hph: default layout"));
  EXPECT_TRUE(HasNote(p, "hph: even partition "));
  EXPECT_FALSE(HasNote(p, "hph: the designer's layout is rank order"));
}

TEST(HphStrategy, BadOptionsAreLocatedErrors) {
  const Scenario s = Small();
  EXPECT_EQ(testing::PlanErrorOf(s, Spec({{"stages", "2"}, {"mapping", "ring"}})),
            "s.yaml:9:5: strategies[0].options.mapping = \"ring\": must be one of: topology, "
            "default");
  EXPECT_EQ(testing::PlanErrorOf(s, Spec({{"stages", "2"}, {"partition", "flops"}})),
            "s.yaml:9:5: strategies[0].options.partition = \"flops\": must be one of: speed, even");
  EXPECT_EQ(testing::PlanErrorOf(s, Spec({{"stages", "2"}, {"recompute", "full"}})),
            "s.yaml:9:5: strategies[0].options.recompute = \"full\": must be one of: auto, off");
  EXPECT_EQ(testing::PlanErrorOf(s, Spec({{"stages", "2"}, {"rank_order", "tdp"}})),
            "s.yaml:9:5: strategies[0].options.rank_order = \"tdp\": only applies with mapping: "
            "default (the topology designer places the ranks)");
  // The schedule is the planner's to choose.
  EXPECT_EQ(testing::PlanErrorOf(s, Spec({{"stages", "2"}, {"schedule", "gpipe"}})),
            "s.yaml:9:5: strategies[0].options.schedule = \"gpipe\": unknown option (known: "
            "bucket_size, data, dp_overlap, mapping, micro_batches, partition, rank_order, "
            "recompute, scatter_gather, sequence_parallel, stages, tensor)");
}

}  // namespace
}  // namespace stratasim
