// What a strategy produces: the task graph of a few training iterations and facts about it.
#ifndef STRATASIM_STRATEGIES_PLAN_H_
#define STRATASIM_STRATEGIES_PLAN_H_

#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/task_graph.h"

namespace stratasim {

struct Plan {
  TaskGraph graph;
  double samples_per_iteration = 0;
  double tokens_per_sample = 0;
  std::vector<std::string> notes;  // what the plan decided, for the report
};

// Plans strategy `spec` of scenario `s`: warm-up + measured iterations of the training step.
// Throws ConfigError for bad options (unknown kind or option, impossible value) and
// stratasim::Error for a plan that cannot be made on this cluster.
Plan PlanStrategy(const Scenario& s, const StrategySpec& spec);

// Kinds PlanStrategy knows, for help texts and errors.
std::vector<std::string> StrategyKinds();

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PLAN_H_
