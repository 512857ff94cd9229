#include "report/solver_table.h"

#include <gtest/gtest.h>

#include "report/results_json.h"

namespace stratasim {
namespace {

StrategyResult Solved(const std::string& name) {
  StrategyResult r;
  r.name = name;
  r.kind = "oases";
  r.metrics.iteration_time_s = 0.5;
  SolverFigures f;
  f.planner = "oases ILP";
  f.solver = "GLPK 5.0";
  f.status = "optimal";
  f.problems = 3;
  f.variables = 120;
  f.rows = 80;
  f.objective_s = 0.0125;
  f.predicted_iteration_s = 0.45;
  f.solve_s = 0.0234;
  r.solver = f;
  return r;
}

TEST(SolverTableTest, ShowsTheSolveTimeAndObjectiveBesideTheSimulatedTime) {
  RunResults results;
  results.strategies.push_back(Solved("oases-ilp"));
  StrategyResult plain;
  plain.name = "megatron";
  results.strategies.push_back(plain);
  EXPECT_EQ(FormatSolverTable(results),
            "MILP planners (solve: wall-clock seconds in the solver, printed only; objective: the "
            "chosen solution's, the planner's own time model)\n\n"
            "strategy   planner    solver    status   MILPs  variables x rows  solve (ms)  "
            "objective (ms)  predicted / simulated (ms)\n"
            "---------  ---------  --------  -------  -----  ----------------  ----------  "
            "--------------  --------------------------\n"
            "oases-ilp  oases ILP  GLPK 5.0  optimal      3          120 x 80        23.4  "
            "        12.500             450.00 / 500.00\n");
}

TEST(SolverTableTest, TheFilesCarryNoneOfIt) {
  // The solve time is wall-clock: results.json and results.csv stay deterministic.
  RunResults results;
  results.strategies.push_back(Solved("oases-ilp"));
  for (const std::string& text : {ResultsToJson(results), ResultsToCsv(results)}) {
    EXPECT_EQ(text.find("solve"), std::string::npos);
    EXPECT_EQ(text.find("0.0234"), std::string::npos);
    EXPECT_EQ(text.find("GLPK"), std::string::npos);
  }
}

TEST(SolverTableTest, EmptyWithoutSolverFigures) {
  RunResults results;
  StrategyResult plain;
  plain.name = "megatron";
  results.strategies.push_back(plain);
  StrategyResult failed = Solved("failed");
  failed.ok = false;
  results.strategies.push_back(failed);
  EXPECT_EQ(FormatSolverTable(results), "");
}

}  // namespace
}  // namespace stratasim
