// What a strategy produces: the task graph of a few training iterations and facts about it.
#ifndef STRATASIM_STRATEGIES_PLAN_H_
#define STRATASIM_STRATEGIES_PLAN_H_

#include <optional>
#include <string>
#include <vector>

#include "core/gnn_figures.h"
#include "core/moe_figures.h"
#include "core/pipeline_figures.h"
#include "core/scenario.h"
#include "core/solver_figures.h"
#include "core/strategy_options.h"
#include "core/task_graph.h"

namespace stratasim {

struct Plan {
  // Planners fill the fields one by one (Plan plan; plan.graph = TaskGraph(n); ...), so that a
  // new field does not break every planner's initializer.
  TaskGraph graph{0};
  double samples_per_iteration = 0;
  double tokens_per_sample = 0;
  std::vector<std::string> notes;  // what the plan decided, for the report
  // Pipeline stage of each rank, for the report's peak memory per stage; empty when the plan
  // is not pipelined.
  std::vector<int> rank_stage;
  // MoE strategies only: the figures the planner decided that the trace cannot show, for the
  // report (docs/moe.md).
  std::optional<MoeFigures> moe;
  // Pipelined plans only (kinds pipeline and 3d, and the pipeline planners): the partition and
  // what a planner chose and predicted, for the report (core/pipeline_figures.h).
  std::optional<PipelineFigures> pipeline;
  // Plans a MILP planner chose: its objective and solve time, for the console only
  // (core/solver_figures.h).
  std::optional<SolverFigures> solver;
  // GNN feature-transfer strategies only (strategies/gnn/): bytes copied, hit rate and cache
  // memory, for the report (core/gnn_figures.h).
  std::optional<GnnFigures> gnn;
  // Whether the graph is folded (strategies/fold.h): "folded: ..." or "full: <why not>".
  std::string fold;
};

// Plans strategy `spec` of scenario `s`: warm-up + measured iterations of the training step.
// Throws ConfigError for bad options (unknown kind or option, impossible value) and
// stratasim::Error for a plan that cannot be made on this cluster.
Plan PlanStrategy(const Scenario& s, const StrategySpec& spec);

// Kinds PlanStrategy knows, in the order `stratasim strategies` lists them.
std::vector<std::string> StrategyKinds();

// One kind's line in `stratasim strategies` and its declared options; nullptr for an unknown
// kind.
struct StrategyKindInfo {
  const char* kind;
  const char* summary;
  const OptionSpecs& options;
  // Options (a YAML flow map) with which the kind plans on a small cluster of 8 GPUs: the
  // registry's test plans every kind with them.
  const char* example;
};
const StrategyKindInfo* FindStrategyKind(const std::string& kind);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PLAN_H_
