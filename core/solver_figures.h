// What a plan's MILP planner decided (Oases' TP-degree planner, strategies/planners/
// oases_strategy.h; HSDP's split planner, strategies/sharded/hsdp_planner.h; any planner
// solving with strategies/planners/milp.h), for the console's
// planner table (report/solver_table.h), beside the simulated time. `solve_s` is wall-clock:
// printed only, never written to results files or notes (determinism).
#ifndef STRATASIM_CORE_SOLVER_FIGURES_H_
#define STRATASIM_CORE_SOLVER_FIGURES_H_

#include <string>

namespace stratasim {

struct SolverFigures {
  std::string planner;  // "oases ILP", "hsdp split"
  std::string solver;   // "GLPK 5.0"
  std::string status;   // of the chosen solution: "optimal", "feasible" (time limit)
  int problems = 1;     // MILPs solved
  int variables = 0;    // of the chosen solution's MILP
  int rows = 0;
  double objective_s = 0;  // the chosen solution's objective, in the planner's unit of time
  double predicted_iteration_s = 0;  // the planner's estimate of the iteration; 0: none
  double solve_s = 0;                // wall-clock seconds in the solver, all problems together
};

}  // namespace stratasim

#endif  // STRATASIM_CORE_SOLVER_FIGURES_H_
