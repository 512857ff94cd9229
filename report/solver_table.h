// The MILP planners' figures (core/solver_figures.h) beside what the simulation measured: a
// console table printed under the main one. Never written to files: its solve times are
// wall-clock (determinism of results.json and results.csv).
#ifndef STRATASIM_REPORT_SOLVER_TABLE_H_
#define STRATASIM_REPORT_SOLVER_TABLE_H_

#include <string>

#include "report/results.h"

namespace stratasim {

// One row per successful strategy with solver figures, in scenario order:
//   strategy  planner  solver  status  MILPs  variables x rows  solve (ms)  objective (ms)
//   predicted / simulated (ms)
// "" when none has them.
std::string FormatSolverTable(const RunResults& r);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_SOLVER_TABLE_H_
