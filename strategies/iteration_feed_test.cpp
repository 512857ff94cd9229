#include "strategies/iteration_feed.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

using testing::SpecOf;
using testing::TinyGpt;
using testing::TinyGptScenario;

Scenario FourIterations() {
  Scenario s = TinyGptScenario(TinyGpt{});
  s.training.warmup_iterations = 1;
  s.training.measured_iterations = 3;
  return s;
}

int HighestIteration(const TaskGraph& g) {
  int highest = -1;
  for (const Task& t : g.tasks()) highest = std::max(highest, t.iteration);
  return highest;
}

// The planner pauses before each iteration not asked for; retiring between asks keeps the
// graph to what is asked; the plan in the end is the one PlanStrategy makes.
TEST(IterationFeed, AddsIterationsAsAskedAndEndsWithThePlan) {
  const Scenario s = FourIterations();
  const StrategySpec spec = SpecOf("ddp", "ddp", {});
  const Plan whole = PlanStrategy(s, spec);
  IterationFeed feed(s, spec);
  EXPECT_TRUE(feed.Through(0));
  EXPECT_EQ(HighestIteration(*feed.graph()), 0);
  EXPECT_TRUE(feed.Through(1));
  EXPECT_EQ(HighestIteration(*feed.graph()), 1);
  const TaskId two_start = feed.graph()->next_id();
  feed.graph()->Retire(two_start);
  EXPECT_TRUE(feed.graph()->tasks().empty());
  EXPECT_TRUE(feed.Through(2));
  EXPECT_EQ(feed.graph()->first_live(), two_start);
  EXPECT_FALSE(feed.Through(3));
  EXPECT_TRUE(feed.finished());
  EXPECT_EQ(feed.graph()->next_id(), static_cast<TaskId>(whole.graph.tasks().size()));
  EXPECT_EQ(feed.plan().notes, whole.notes);
  EXPECT_EQ(&feed.plan().graph, feed.graph());
  for (const Task& t : feed.graph()->tasks()) {
    EXPECT_EQ(t.name, whole.graph.task(t.id).name);
  }
}

// A feed destroyed before its planner finished stops it.
TEST(IterationFeed, StopsAnUnfinishedPlanner) {
  const Scenario s = FourIterations();
  IterationFeed feed(s, SpecOf("ddp", "ddp", {}));
  EXPECT_TRUE(feed.Through(0));
}

TEST(IterationFeed, HandsOverThePlannersError) {
  const Scenario s = FourIterations();
  IterationFeed feed(s, SpecOf("ddp", "ddp", {{"bucket_size", "-1"}}));
  EXPECT_THROW(feed.Through(0), ConfigError);
}

}  // namespace
}  // namespace stratasim
