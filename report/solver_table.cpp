#include "report/solver_table.h"

#include <cstdio>
#include <vector>

#include "report/aligned_columns.h"

namespace stratasim {
std::string FormatSolverTable(const RunResults& r) {
  std::vector<std::vector<std::string>> rows = {{"strategy", "planner", "solver", "status", "MILPs",
                                                 "variables x rows", "solve (ms)", "objective (ms)",
                                                 "predicted / simulated (ms)"}};
  for (const StrategyResult& s : r.strategies) {
    if (!s.ok || !s.solver) continue;
    const SolverFigures& f = *s.solver;
    rows.push_back({s.name, f.planner, f.solver, f.status, std::to_string(f.problems),
                    std::to_string(f.variables) + " x " + std::to_string(f.rows),
                    Num("%.1f", f.solve_s * 1e3), Num("%.3f", f.objective_s * 1e3),
                    f.predicted_iteration_s > 0
                        ? Num("%.2f", f.predicted_iteration_s * 1e3) + " / " +
                              Num("%.2f", s.metrics.iteration_time_s * 1e3)
                        : "- / " + Num("%.2f", s.metrics.iteration_time_s * 1e3)});
  }
  if (rows.size() == 1) return "";
  return "MILP planners (solve: wall-clock seconds in the solver, printed only; objective: the "
         "chosen solution's, the planner's own time model)\n\n" +
         AlignedColumns(rows, 4);
}

}  // namespace stratasim
