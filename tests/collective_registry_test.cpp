// The collective registry walked (core/collective_algorithms.def): every algorithm is
// documented in docs/collectives.md and reachable from a scenario: for each kind it serves
// that a planner emits, a scenario naming it loads, plans and simulates, and every collective
// of that kind runs it. A new algorithm fails here until it is documented and lowers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/collective_names.h"
#include "core/scenario.h"
#include "sim/executor.h"
#include "strategies/plan.h"
#include "tests/cli_runner.h"
#include "tests/scenario_text.h"

namespace stratasim {
namespace {

const char kTraining[] =
    "training: {global_batch: 8, micro_batch: 1, precision: bf16,\n"
    "           iterations: {warmup: 0, measured: 1}, seed: 3}\n";
const char kDense[] =
    "model: {kind: gpt, layers: 2, hidden: 512, heads: 8, sequence: 256, vocabulary: 1024}\n";
using testing::kSmallMoeModel;

// A planner that emits collectives of `kind`, with `{}` where the algorithm's name goes.
struct Route {
  CollectiveKind kind;
  const char* model;
  const char* strategy;  // a strategies entry
  bool by_option;        // the name is the strategy's `algorithm` option, not a setting
};
const Route kRoutes[] = {
    {CollectiveKind::kAllReduce, kDense, "{name: s, kind: ddp, options: {algorithm: {}}}", true},
    {CollectiveKind::kReduceScatter, kDense, "{name: s, kind: zero2}", false},
    {CollectiveKind::kAllGather, kDense, "{name: s, kind: zero2}", false},
    {CollectiveKind::kAllToAll, kSmallMoeModel, "{name: s, kind: deepspeed-moe}", false},
    {CollectiveKind::kAllToAllV, kSmallMoeModel,
     "{name: s, kind: deepspeed-moe, options: {dispatch: routed, algorithm: {}}}", true},
    // Skewed routing: FasterMoE shadows the popular experts (broadcast) and reduces their
    // gradients to their owners.
    {CollectiveKind::kBroadcast, kSmallMoeModel, "{name: s, kind: fastermoe, options: {skew: 1.5}}",
     false},
    {CollectiveKind::kReduce, kSmallMoeModel, "{name: s, kind: fastermoe, options: {skew: 1.5}}",
     false},
};

std::string ScenarioFor(const Route& r, const std::string& algorithm) {
  std::string strategy = r.strategy;
  if (r.by_option) strategy.replace(strategy.find("{}"), 2, algorithm);
  std::string text = "name: registry\n" + testing::TwoA100Servers(2) + kTraining + r.model;
  if (!r.by_option) {
    text += "simulation: {collectives: {algorithms: {" + std::string(ToString(r.kind)) + ": " +
            algorithm + "}}}\n";
  }
  return text + "strategies:\n  - " + strategy + "\n";
}

TEST(CollectiveRegistry, EveryAlgorithmIsDocumented) {
  const std::string docs =
      testing::Slurp(std::string(STRATASIM_SOURCE_DIR) + "/docs/collectives.md");
  ASSERT_FALSE(docs.empty());
  for (const CollectiveAlgorithmName& a : AllCollectiveAlgorithms()) {
    EXPECT_NE(docs.find("\n### " + std::string(a.name) + " (`"), std::string::npos)
        << a.name << " has no section in docs/collectives.md (### " << a.name << " (`file`))";
  }
}

TEST(CollectiveRegistry, EveryAlgorithmRunsFromAScenario) {
  for (const CollectiveAlgorithmName& a : AllCollectiveAlgorithms()) {
    const std::string name(a.name);
    int reached = 0;
    for (const Route& r : kRoutes) {
      if (!a.Serves(r.kind)) continue;
      SCOPED_TRACE(name + " for " + std::string(ToString(r.kind)));
      const Scenario s = LoadScenarioText(ScenarioFor(r, name), "registry.yaml");
      const Plan plan = PlanStrategy(s, s.strategies.at(0));
      const ExecutionTrace trace = sim::Simulate(plan.graph, s.cluster, s.simulation);
      int ran = 0;
      for (size_t c = 0; c < plan.graph.collectives().size(); ++c) {
        if (plan.graph.collectives()[c].kind != r.kind) continue;
        ++ran;
        EXPECT_EQ(trace.collective_algorithms.at(c).substr(0, name.size() + 1), name + "/")
            << trace.collective_algorithms.at(c);
      }
      EXPECT_GT(ran, 0) << "the scenario has no " << ToString(r.kind);
      reached += ran > 0;
    }
    EXPECT_GT(reached, 0) << name << ": no scenario here reaches a kind it serves; add a route";
  }
}

}  // namespace
}  // namespace stratasim
