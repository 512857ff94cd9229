// A small mixed-integer linear programming interface for the planners whose papers solve an
// ILP (Oases' TP-degree planner, HSDP's fragment planner), backed by GLPK's branch-and-cut
// (Debian libglpk-dev; Makhorin, GNU Linear Programming Kit, glpk.pdf, "glp_intopt").
//
// A problem is built column by column and row by row, then solved once:
//
//   milp::Problem p("oases");
//   int x = p.AddBinary("x_attn0_t2", 1.5e-3);        // cost 1.5 ms if chosen
//   int y = p.AddBinary("x_attn0_t4", 1.1e-3);
//   p.AddRow("one_degree_attn0", {{x, 1}, {y, 1}}, 1, 1);   // exactly one
//   milp::Solution s = milp::Solve(p);
//
// The objective is minimised. GLPK runs single-threaded and deterministically for a given
// problem, so the same scenario gives the same plan; a time limit that stops the search early
// makes the answer depend on the machine's speed, and the solution says so (kFeasible).
#ifndef STRATASIM_STRATEGIES_PLANNERS_MILP_H_
#define STRATASIM_STRATEGIES_PLANNERS_MILP_H_

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace stratasim::milp {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

class Problem {
 public:
  explicit Problem(std::string name) : name_(std::move(name)) {}

  // A column with bounds lower <= x <= upper (either may be infinite) and objective
  // coefficient `cost`; `integer` restricts it to integers. Returns its index.
  int AddVariable(const std::string& name, double lower, double upper, double cost, bool integer);
  int AddBinary(const std::string& name, double cost) {
    return AddVariable(name, 0, 1, cost, true);
  }
  int AddContinuous(const std::string& name, double lower, double upper, double cost) {
    return AddVariable(name, lower, upper, cost, false);
  }

  // A row lower <= sum(coef * x[index]) <= upper (either bound may be infinite; equal bounds
  // make an equality). An index may appear once per row. Returns the row's index.
  int AddRow(const std::string& name, const std::vector<std::pair<int, double>>& terms,
             double lower, double upper);

  const std::string& name() const { return name_; }
  int variables() const { return static_cast<int>(columns_.size()); }
  int rows() const { return static_cast<int>(rows_.size()); }

  struct Column {
    std::string name;
    double lower, upper, cost;
    bool integer;
  };
  struct Row {
    std::string name;
    std::vector<std::pair<int, double>> terms;
    double lower, upper;
  };
  const std::vector<Column>& columns() const { return columns_; }
  const std::vector<Row>& row_list() const { return rows_; }

 private:
  std::string name_;
  std::vector<Column> columns_;
  std::vector<Row> rows_;
};

enum class Status {
  kOptimal,     // proven optimal
  kFeasible,    // the time limit stopped the search: the best solution found, not proven
  kInfeasible,  // no assignment satisfies the rows and bounds
  kUnbounded,   // the objective decreases without bound
  kNoSolution,  // the time limit stopped the search before any solution was found
};
const char* ToString(Status s);

struct Options {
  // Wall-clock limit of the branch-and-cut search; <= 0: none.
  double time_limit_s = 60;
  // Relative MIP gap at which the search stops as optimal (GLPK's mip_gap).
  double relative_gap = 0;
};

struct Solution {
  Status status = Status::kNoSolution;
  double objective = 0;        // valid for kOptimal and kFeasible
  std::vector<double> values;  // one per variable, for kOptimal and kFeasible
  // Wall-clock seconds spent in the solver: for the console, never for files (determinism).
  double solve_seconds = 0;
  std::string solver;  // "GLPK 5.0"

  bool has_values() const { return status == Status::kOptimal || status == Status::kFeasible; }
  // values[index] rounded to the nearest integer (for integer and binary variables).
  long long Integer(int index) const;
};

// Solves `p`. Throws stratasim::Error for a malformed problem (an index out of range, a
// repeated index in a row, lower > upper, a NaN coefficient), never for an infeasible one:
// that is a status the caller turns into its own located error.
Solution Solve(const Problem& p, const Options& options = {});

}  // namespace stratasim::milp

#endif  // STRATASIM_STRATEGIES_PLANNERS_MILP_H_
