// Shared by the integration tests that simulate one strategy of a scenario and look at its plan,
// trace and metrics together.
#ifndef STRATASIM_TESTS_SIMULATED_STRATEGY_H_
#define STRATASIM_TESTS_SIMULATED_STRATEGY_H_

#include <gtest/gtest.h>

#include <string>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "sim/executor.h"
#include "strategies/plan.h"

namespace stratasim::testing {

struct SimulatedStrategy {
  Plan plan;
  ExecutionTrace trace;
  Metrics metrics;
};

// Plans, simulates and measures the strategy called `name`; a test failure when there is none.
inline SimulatedStrategy Simulated(const Scenario& s, const std::string& name) {
  for (const StrategySpec& spec : s.strategies) {
    if (spec.name != name) continue;
    SimulatedStrategy out;
    out.plan = PlanStrategy(s, spec);
    out.trace = sim::Simulate(out.plan.graph, s.cluster, s.simulation);
    out.metrics = Evaluate(s, spec, out.plan.graph, out.trace, out.plan.samples_per_iteration,
                           out.plan.tokens_per_sample, out.plan.rank_stage)
                      .metrics;
    return out;
  }
  ADD_FAILURE() << "no strategy " << name;
  return {};
}

}  // namespace stratasim::testing

#endif  // STRATASIM_TESTS_SIMULATED_STRATEGY_H_
