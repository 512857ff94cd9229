#include "strategies/planners/milp.h"

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>

#include "core/error.h"

namespace stratasim::milp {
namespace {

[[noreturn]] void Malformed(const Problem& p, const std::string& what) {
  throw Error("MILP problem \"" + p.name() + "\": " + what);
}

// GLPK's bound type for [lower, upper]: free, lower, upper, double-bounded or fixed.
int BoundType(double lower, double upper) {
  const bool has_lower = std::isfinite(lower), has_upper = std::isfinite(upper);
  if (has_lower && has_upper) return lower == upper ? GLP_FX : GLP_DB;
  if (has_lower) return GLP_LO;
  if (has_upper) return GLP_UP;
  return GLP_FR;
}

void CheckBounds(const Problem& p, const std::string& what, double lower, double upper) {
  if (std::isnan(lower) || std::isnan(upper) || lower > upper || lower == kInfinity ||
      upper == -kInfinity) {
    Malformed(p, what + " has bounds [" + std::to_string(lower) + ", " + std::to_string(upper) +
                     "]: need lower <= upper, lower < +inf and upper > -inf");
  }
}

struct ProbDeleter {
  void operator()(glp_prob* lp) const { glp_delete_prob(lp); }
};

}  // namespace

int Problem::AddVariable(const std::string& name, double lower, double upper, double cost,
                         bool integer) {
  columns_.push_back({name, lower, upper, cost, integer});
  return static_cast<int>(columns_.size()) - 1;
}

int Problem::AddRow(const std::string& name, const std::vector<std::pair<int, double>>& terms,
                    double lower, double upper) {
  rows_.push_back({name, terms, lower, upper});
  return static_cast<int>(rows_.size()) - 1;
}

const char* ToString(Status s) {
  switch (s) {
    case Status::kOptimal:
      return "optimal";
    case Status::kFeasible:
      return "feasible (time limit, not proven optimal)";
    case Status::kInfeasible:
      return "infeasible";
    case Status::kUnbounded:
      return "unbounded";
    case Status::kNoSolution:
      return "no solution within the time limit";
  }
  return "?";
}

long long Solution::Integer(int index) const {
  return std::llround(values.at(static_cast<size_t>(index)));
}

Solution Solve(const Problem& p, const Options& options) {
  // GLPK aborts the process on a malformed call (glp_error), so everything it would reject is
  // checked here first and reported as an exception instead.
  const int n = p.variables();
  if (n == 0) Malformed(p, "has no variables");
  for (const auto& c : p.columns()) {
    CheckBounds(p, "variable \"" + c.name + "\"", c.lower, c.upper);
    if (!std::isfinite(c.cost)) Malformed(p, "variable \"" + c.name + "\" has a non-finite cost");
  }
  for (const auto& r : p.row_list()) {
    CheckBounds(p, "row \"" + r.name + "\"", r.lower, r.upper);
    std::vector<bool> seen(static_cast<size_t>(n), false);
    for (const auto& [index, coef] : r.terms) {
      if (index < 0 || index >= n) {
        Malformed(p, "row \"" + r.name + "\" names variable " + std::to_string(index) + " of " +
                         std::to_string(n));
      }
      if (seen[static_cast<size_t>(index)]) {
        Malformed(
            p, "row \"" + r.name + "\" names variable \"" + p.columns()[index].name + "\" twice");
      }
      seen[static_cast<size_t>(index)] = true;
      if (!std::isfinite(coef)) {
        Malformed(p, "row \"" + r.name + "\" has a non-finite coefficient");
      }
    }
  }

  std::unique_ptr<glp_prob, ProbDeleter> lp(glp_create_prob());
  glp_term_out(GLP_OFF);
  glp_set_prob_name(lp.get(), p.name().c_str());
  glp_set_obj_dir(lp.get(), GLP_MIN);
  glp_add_cols(lp.get(), n);
  for (int j = 0; j < n; ++j) {
    const auto& c = p.columns()[j];
    glp_set_col_name(lp.get(), j + 1, c.name.c_str());
    glp_set_col_bnds(lp.get(), j + 1, BoundType(c.lower, c.upper), c.lower, c.upper);
    glp_set_obj_coef(lp.get(), j + 1, c.cost);
    if (c.integer) {
      glp_set_col_kind(lp.get(), j + 1, GLP_IV);
    }
  }
  if (p.rows() > 0) glp_add_rows(lp.get(), p.rows());
  // GLPK's arrays are 1-based: element 0 is unused.
  std::vector<int> index;
  std::vector<double> value;
  for (int i = 0; i < p.rows(); ++i) {
    const auto& r = p.row_list()[i];
    glp_set_row_name(lp.get(), i + 1, r.name.c_str());
    glp_set_row_bnds(lp.get(), i + 1, BoundType(r.lower, r.upper), r.lower, r.upper);
    index.assign(1, 0);
    value.assign(1, 0.0);
    for (const auto& [j, coef] : r.terms) {
      index.push_back(j + 1);
      value.push_back(coef);
    }
    glp_set_mat_row(lp.get(), i + 1, static_cast<int>(r.terms.size()), index.data(), value.data());
  }

  Solution s;
  s.solver = std::string("GLPK ") + glp_version();
  const auto start = std::chrono::steady_clock::now();
  glp_iocp iocp;
  glp_init_iocp(&iocp);
  iocp.msg_lev = GLP_MSG_OFF;
  iocp.presolve = GLP_ON;  // solves the LP relaxation itself
  iocp.mip_gap = options.relative_gap;
  if (options.time_limit_s > 0) {
    iocp.tm_lim = static_cast<int>(std::min(options.time_limit_s * 1e3, 2e9));
  }
  const int rc = glp_intopt(lp.get(), &iocp);
  s.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (rc == GLP_ENOPFS) {
    s.status = Status::kInfeasible;
  } else if (rc == GLP_ENODFS) {
    s.status = Status::kUnbounded;
  } else if (rc != 0 && rc != GLP_ETMLIM && rc != GLP_EMIPGAP) {
    throw Error("MILP problem \"" + p.name() + "\": GLPK's glp_intopt failed with code " +
                std::to_string(rc));
  } else {
    switch (glp_mip_status(lp.get())) {
      case GLP_OPT:
        s.status = (rc == 0 || rc == GLP_EMIPGAP) ? Status::kOptimal : Status::kFeasible;
        break;
      case GLP_FEAS:
        s.status = Status::kFeasible;
        break;
      case GLP_NOFEAS:
        s.status = Status::kInfeasible;
        break;
      default:
        s.status = Status::kNoSolution;
    }
  }
  if (s.has_values()) {
    s.objective = glp_mip_obj_val(lp.get());
    s.values.resize(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j) s.values[j] = glp_mip_col_val(lp.get(), j + 1);
  }
  return s;
}

}  // namespace stratasim::milp
