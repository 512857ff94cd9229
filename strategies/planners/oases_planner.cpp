#include "strategies/planners/oases_planner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "core/units.h"

namespace stratasim::planners {
namespace {

// The MILP is posed in milliseconds and GiB so that its coefficients are near 1: GLPK's
// tolerances are absolute (glpk.pdf, "glp_intopt": tol_int 1e-5, tol_obj 1e-7), and seconds
// (1e-4) against bytes (1e10) would sit at both ends of them.
constexpr double kMsPerS = 1e3;
constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

std::string Name(const OasesProfile& p, int i, int a) {
  return "x_" + p.names[i] + "_t" + std::to_string(p.degrees[a]);
}

// The node terms of sub-layer i at degree index a (see the header): both sub-batches' overlap
// of compute with the sub-layer's own collectives, and the exposed start and end of each pass.
double NodeSeconds(const OasesProfile& p, int i, int a) {
  const OasesCost& c = p.costs[i][a];
  const double r = c.backward_s + c.recompute_s;
  double t = std::max(c.forward_s, c.forward_comm_s) + std::max(r, c.backward_comm_s);
  if (i == 0) t += c.forward_s + c.backward_comm_s;
  if (i + 1 == p.SubLayers()) t += c.forward_comm_s + r;
  return t;
}

// The edge terms between sub-layer i at degree index a and i + 1 at b: one sub-batch computes
// one side while the other's collective of the other side runs, plus the re-shard.
double EdgeSeconds(const OasesProfile& p, int i, int a, int b) {
  const OasesCost& u = p.costs[i][a];
  const OasesCost& v = p.costs[i + 1][b];
  return std::max(v.forward_s, u.forward_comm_s) +
         std::max(u.backward_s + u.recompute_s, v.backward_comm_s) + p.reshard_s[i][a][b];
}

void CheckFigure(double v, const std::string& what) {
  if (!(v >= 0) || !std::isfinite(v)) {
    throw Error("oases planner: " + what + " = " + std::to_string(v) + ": must be finite and >= 0");
  }
}

// Columns x[i][a], e[i][a][b] and z, the assignment and linking rows; the objective is the time
// (minimise_memory false) or the memory (true). The memory row is added by the caller.
struct Model {
  milp::Problem problem{"oases"};
  std::vector<std::vector<int>> x;  // [sub-layer][degree]
  int z = -1;                       // the largest working set, GiB
};

Model BuildModel(const OasesProfile& p, bool minimise_memory, int required) {
  Model m;
  const int n = p.SubLayers(), k = p.Degrees();
  m.problem = milp::Problem(minimise_memory ? "oases_memory" : "oases");
  for (int i = 0; i < n; ++i) {
    std::vector<int>& row = m.x.emplace_back();
    std::vector<std::pair<int, double>> one;
    for (int a = 0; a < k; ++a) {
      const OasesCost& c = p.costs[i][a];
      const double cost = minimise_memory ? (c.state_bytes + c.kept_bytes) / kBytesPerGiB
                                          : NodeSeconds(p, i, a) * kMsPerS;
      row.push_back(m.problem.AddBinary(Name(p, i, a), cost));
      one.emplace_back(row.back(), 1);
    }
    m.problem.AddRow("one_degree_" + p.names[i], one, 1, 1);
  }
  for (int i = 0; i + 1 < n; ++i) {
    // e[a][b] continuous in [0, 1]: with x binary, the two families of rows leave it exactly
    // x[i][a] x[i+1][b] (a transport polytope with 0/1 margins has one point).
    std::vector<std::vector<int>> e(k, std::vector<int>(k));
    for (int a = 0; a < k; ++a) {
      for (int b = 0; b < k; ++b) {
        const double cost = minimise_memory ? 0 : EdgeSeconds(p, i, a, b) * kMsPerS;
        // Incompatible neighbours: the edge variable is held at 0, which forbids the pair.
        const bool allowed = OasesCompatible(p.degrees[a], p.degrees[b]);
        e[a][b] = m.problem.AddContinuous("e_" + p.names[i] + "_t" + std::to_string(p.degrees[a]) +
                                              "_t" + std::to_string(p.degrees[b]),
                                          0, allowed ? 1 : 0, cost);
      }
    }
    for (int a = 0; a < k; ++a) {
      std::vector<std::pair<int, double>> from{{m.x[i][a], -1}}, to{{m.x[i + 1][a], -1}};
      for (int b = 0; b < k; ++b) from.emplace_back(e[a][b], 1), to.emplace_back(e[b][a], 1);
      m.problem.AddRow("from_" + Name(p, i, a), from, 0, 0);
      m.problem.AddRow("to_" + Name(p, i + 1, a), to, 0, 0);
    }
  }
  if (required >= 0) {
    std::vector<std::pair<int, double>> terms;
    for (int i = 0; i < n; ++i) terms.emplace_back(m.x[i][required], 1);
    m.problem.AddRow("some_t" + std::to_string(p.degrees[required]), terms, 1, milp::kInfinity);
  }
  m.z = m.problem.AddContinuous("z_working_GiB", 0, milp::kInfinity, minimise_memory ? 1.0 : 0.0);
  for (int i = 0; i < n; ++i) {
    std::vector<std::pair<int, double>> terms{{m.z, 1}};
    for (int a = 0; a < k; ++a) {
      const double w = p.costs[i][a].working_bytes / kBytesPerGiB;
      if (w > 0) terms.emplace_back(m.x[i][a], -w);
    }
    if (terms.size() > 1) m.problem.AddRow("z_above_" + p.names[i], terms, 0, milp::kInfinity);
  }
  return m;
}

std::vector<int> Choice(const Model& m, const milp::Solution& s) {
  std::vector<int> choice;
  for (const std::vector<int>& row : m.x) {
    int chosen = -1;
    for (int a = 0; a < static_cast<int>(row.size()); ++a) {
      if (s.Integer(row[a]) == 1) chosen = a;
    }
    if (chosen < 0) throw Error("oases planner: the solver's solution chose no degree");
    choice.push_back(chosen);
  }
  return choice;
}

std::string DegreeList(const OasesProfile& p, const std::vector<int>& choice) {
  std::vector<int> d;
  for (int a : choice) d.push_back(p.degrees[a]);
  return OasesDegreesText(p.names, d);
}

}  // namespace

void CheckOasesProfile(const OasesProfile& p) {
  const int n = p.SubLayers(), k = p.Degrees();
  if (n == 0) throw Error("oases planner: the profile has no sub-layer");
  if (k == 0) throw Error("oases planner: the profile has no candidate degree");
  for (int a = 0; a < k; ++a) {
    if (p.degrees[a] < 1 || (a > 0 && p.degrees[a] <= p.degrees[a - 1])) {
      throw Error("oases planner: the candidate degrees must be >= 1 and increasing");
    }
  }
  if (static_cast<int>(p.names.size()) != n) {
    throw Error("oases planner: " + std::to_string(p.names.size()) + " names for " +
                std::to_string(n) + " sub-layers");
  }
  if (static_cast<int>(p.reshard_s.size()) != n - 1) {
    throw Error("oases planner: " + std::to_string(p.reshard_s.size()) + " re-shard tables for " +
                std::to_string(n - 1) + " edges");
  }
  for (int i = 0; i < n; ++i) {
    if (static_cast<int>(p.costs[i].size()) != k) {
      throw Error("oases planner: " + p.names[i] + " has " + std::to_string(p.costs[i].size()) +
                  " costs for " + std::to_string(k) + " degrees");
    }
    for (int a = 0; a < k; ++a) {
      const OasesCost& c = p.costs[i][a];
      const std::string at = p.names[i] + " at t=" + std::to_string(p.degrees[a]) + ": ";
      CheckFigure(c.forward_s, at + "forward_s");
      CheckFigure(c.backward_s, at + "backward_s");
      CheckFigure(c.recompute_s, at + "recompute_s");
      CheckFigure(c.forward_comm_s, at + "forward_comm_s");
      CheckFigure(c.backward_comm_s, at + "backward_comm_s");
      CheckFigure(c.state_bytes, at + "state_bytes");
      CheckFigure(c.kept_bytes, at + "kept_bytes");
      CheckFigure(c.working_bytes, at + "working_bytes");
    }
  }
  for (int i = 0; i + 1 < n; ++i) {
    const auto& r = p.reshard_s[i];
    bool square = static_cast<int>(r.size()) == k;
    for (const std::vector<double>& row : r) square = square && static_cast<int>(row.size()) == k;
    if (!square) {
      throw Error("oases planner: the re-shard table after " + p.names[i] + " is not " +
                  std::to_string(k) + " x " + std::to_string(k));
    }
    for (int a = 0; a < k; ++a) {
      for (int b = 0; b < k; ++b) {
        CheckFigure(r[a][b], "re-shard after " + p.names[i] + " t=" + std::to_string(p.degrees[a]) +
                                 " -> t=" + std::to_string(p.degrees[b]));
      }
    }
  }
}

bool OasesCompatible(int a, int b) { return a % b == 0 || b % a == 0; }

double OasesSeconds(const OasesProfile& p, const std::vector<int>& choice) {
  for (int i = 0; i + 1 < p.SubLayers(); ++i) {
    if (!OasesCompatible(p.degrees[choice[i]], p.degrees[choice[i + 1]])) {
      return std::numeric_limits<double>::infinity();
    }
  }
  double t = 0;
  for (int i = 0; i < p.SubLayers(); ++i) {
    t += NodeSeconds(p, i, choice[i]);
    if (i + 1 < p.SubLayers()) t += EdgeSeconds(p, i, choice[i], choice[i + 1]);
  }
  return t;
}

double OasesMemoryBytes(const OasesProfile& p, const std::vector<int>& choice) {
  double held = 0, working = 0;
  for (int i = 0; i < p.SubLayers(); ++i) {
    const OasesCost& c = p.costs[i][choice[i]];
    held += c.state_bytes + c.kept_bytes;
    working = std::max(working, c.working_bytes);
  }
  return held + working;
}

OasesPlan PlanOases(const OasesProfile& p, double memory_limit_bytes, int required_degree,
                    const milp::Options& options) {
  CheckOasesProfile(p);
  if (!(memory_limit_bytes > 0)) {
    throw Error("oases planner: the memory limit must be > 0, not " +
                std::to_string(memory_limit_bytes));
  }
  int required = -1;
  if (required_degree > 0) {
    const auto it = std::find(p.degrees.begin(), p.degrees.end(), required_degree);
    if (it == p.degrees.end()) {
      throw Error("oases planner: the required degree " + std::to_string(required_degree) +
                  " is not a candidate");
    }
    required = static_cast<int>(it - p.degrees.begin());
  }
  Model m = BuildModel(p, /*minimise_memory=*/false, required);
  // sum (states + kept) + z <= limit.
  std::vector<std::pair<int, double>> memory{{m.z, 1}};
  for (int i = 0; i < p.SubLayers(); ++i) {
    for (int a = 0; a < p.Degrees(); ++a) {
      const OasesCost& c = p.costs[i][a];
      memory.emplace_back(m.x[i][a], (c.state_bytes + c.kept_bytes) / kBytesPerGiB);
    }
  }
  m.problem.AddRow("memory_GiB", memory, -milp::kInfinity, memory_limit_bytes / kBytesPerGiB);
  const milp::Solution s = milp::Solve(m.problem, options);
  if (s.status == milp::Status::kInfeasible) {
    // The least memory any assignment needs, by the same rows without the limit.
    const Model least = BuildModel(p, /*minimise_memory=*/true, required);
    const milp::Solution l = milp::Solve(least.problem, options);
    std::string needed = "more than any assignment allows";
    double needed_bytes = std::numeric_limits<double>::infinity();
    if (l.has_values()) {
      const std::vector<int> choice = Choice(least, l);
      needed_bytes = OasesMemoryBytes(p, choice);
      needed = FormatBytes(needed_bytes) + " per GPU (" + DegreeList(p, choice) + ")";
    }
    const std::string what = "oases planner: no feasible plan: the least memory any TP degree " +
                             std::string("assignment of ") + std::to_string(p.SubLayers()) +
                             " sub-layers needs is " + needed + ", above the limit of " +
                             FormatBytes(memory_limit_bytes);
    throw OasesNoPlan(what, needed_bytes, memory_limit_bytes, s.solve_seconds + l.solve_seconds);
  }
  if (!s.has_values()) {
    throw Error(std::string("oases planner: the solver found no plan (") +
                milp::ToString(s.status) + " after " + std::to_string(s.solve_seconds) + " s)");
  }
  OasesPlan plan;
  plan.choice = Choice(m, s);
  for (int a : plan.choice) plan.degrees.push_back(p.degrees[a]);
  // The objective of the chosen assignment, evaluated exactly (the solver's value carries its
  // tolerances).
  plan.objective_s = OasesSeconds(p, plan.choice);
  plan.memory_bytes = OasesMemoryBytes(p, plan.choice);
  plan.status = s.status;
  plan.solver = s.solver;
  plan.variables = m.problem.variables();
  plan.rows = m.problem.rows();
  plan.solve_seconds = s.solve_seconds;
  return plan;
}

std::string OasesDegreesText(const std::vector<std::string>& names,
                             const std::vector<int>& degrees) {
  std::string text;
  const int n = static_cast<int>(degrees.size());
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && degrees[j + 1] == degrees[i]) ++j;
    if (!text.empty()) text += ", ";
    const int known = static_cast<int>(names.size());
    const std::string first = i < known ? names[i] : std::to_string(i);
    const std::string last = j < known ? names[j] : std::to_string(j);
    text += (i == j ? first : first + "-" + last) + " t=" + std::to_string(degrees[i]);
    i = j + 1;
  }
  return text;
}

}  // namespace stratasim::planners
