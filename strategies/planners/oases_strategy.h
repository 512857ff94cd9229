// The `oases` kind with `planner: ilp`: Oases' planner (oases_planner.h) chooses the tensor
// degree of every sub-layer, and the Oases lowering (strategies/tensor/oases.h) builds the plan.
//
// The lowering sizes micro-batches by the largest degree a plan uses (training.micro_batch
// samples per group at that degree, micro_batch x t / t_max at degree t; the paper's planner
// likewise gives degree t's groups gbs x t / gpus samples, planner.py). So the search runs one
// MILP per possible largest degree T: the candidates t that divide T and give each group an even
// number of samples, at least one sub-layer at T. The plans of different T process different
// samples per micro-batch, so they are compared by their predicted iteration: the objective
// (one micro-batch) times the micro-batches per replica, global_batch / (micro_batch x
// gpus / T). A T whose micro-batches do not divide the global batch is skipped.
#ifndef STRATASIM_STRATEGIES_PLANNERS_OASES_STRATEGY_H_
#define STRATASIM_STRATEGIES_PLANNERS_OASES_STRATEGY_H_

#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/strategy_options.h"
#include "strategies/plan.h"
#include "strategies/planners/oases_planner.h"
#include "strategies/tensor/oases.h"

namespace stratasim::planners {

struct OasesChoice {
  OasesShape shape;                  // sub-layer degrees and recompute, ready for LowerOases
  OasesPlan plan;                    // the chosen MILP's solution
  int largest = 1;                   // its largest degree T
  int micro_batches = 1;             // per replica and iteration at T
  double predicted_iteration_s = 0;  // plan.objective_s x micro_batches
  std::vector<std::string> names;    // the sub-layers, in order
  std::vector<std::string> notes;    // what was searched and chosen (deterministic)
  int problems = 0;                  // MILPs solved
  double solve_seconds = 0;          // all of them, wall-clock: console only
};

// Searches as above over all of s's GPUs. Throws stratasim::Error "no feasible plan" with the
// least memory any plan needs and the limit when none fits, or naming why no largest degree
// applies (micro-batch or global batch sizes).
OasesChoice ChooseOasesDegrees(const Scenario& s, bool recompute,
                               const milp::Options& options = {});

// ChooseOasesDegrees, lowered with LowerOases; the notes say the chosen degrees and the
// objective, Plan::solver carries the solve time for the console. The planner's errors are
// ConfigErrors located at option `planner` of `opt`.
Plan PlanOasesWithIlp(const Scenario& s, bool recompute, double sm_interference,
                      const OptionReader& opt);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_OASES_STRATEGY_H_
