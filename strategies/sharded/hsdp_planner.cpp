#include "strategies/sharded/hsdp_planner.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/units.h"
#include "strategies/planners/link_costs.h"

namespace stratasim {
namespace {

// The memory row in GiB and the objective in milliseconds keep GLPK's coefficients near 1
// (its tolerances are absolute and relative to 1).
constexpr double kRowBytes = 1024.0 * 1024 * 1024;
constexpr double kCostSeconds = 1e-3;

void Check(const HsdpSplitProblem& p) {
  const size_t k = p.fractions.size();
  if (k == 0) throw Error("HSDP split problem: no fractions");
  if (p.state_bytes.size() != p.seconds.size()) {
    throw Error("HSDP split problem: seconds and state_bytes differ in units");
  }
  for (size_t u = 0; u < p.seconds.size(); ++u) {
    if (p.seconds[u].size() != k || p.state_bytes[u].size() != k) {
      throw Error("HSDP split problem: unit " + std::to_string(u) +
                  " has not one figure per "
                  "fraction");
    }
  }
}

// Fills the objective and memory of `s.choice`.
void Price(const HsdpSplitProblem& p, HsdpSplit& s) {
  s.predicted_s = 0;
  s.memory_bytes = p.fixed_bytes;
  for (size_t u = 0; u < s.choice.size(); ++u) {
    s.predicted_s += p.seconds[u][s.choice[u]];
    s.memory_bytes += p.state_bytes[u][s.choice[u]];
  }
}

}  // namespace

double LeastHsdpMemoryBytes(const HsdpSplitProblem& p) {
  double bytes = p.fixed_bytes;
  for (const std::vector<double>& unit : p.state_bytes) {
    bytes += *std::min_element(unit.begin(), unit.end());
  }
  return bytes;
}

std::string HsdpNoFeasiblePlanText(const HsdpSplitProblem& p) {
  const double least = LeastHsdpMemoryBytes(p);
  return "no feasible plan: the least memory any split needs is an estimated " +
         FormatBytes(least) + " per GPU (model states " + FormatBytes(least - p.fixed_bytes) +
         " at each unit's most memory-saving fraction, plus " + FormatBytes(p.fixed_bytes) +
         " of gathered weights, unit gradients and activations), over the limit of " +
         FormatBytes(p.limit_bytes) + " (memory_fraction x GPU memory)";
}

HsdpSplit SolveHsdpSplit(const HsdpSplitProblem& p, const milp::Options& options) {
  Check(p);
  const int units = static_cast<int>(p.seconds.size());
  const int k = static_cast<int>(p.fractions.size());
  milp::Problem prob("hsdp_split");
  std::vector<std::vector<int>> x(units, std::vector<int>(k));
  std::vector<std::pair<int, double>> memory;
  for (int u = 0; u < units; ++u) {
    std::vector<std::pair<int, double>> one;
    for (int c = 0; c < k; ++c) {
      x[u][c] = prob.AddBinary("x_u" + std::to_string(u) + "_k" + std::to_string(c),
                               p.seconds[u][c] / kCostSeconds);
      one.emplace_back(x[u][c], 1);
      memory.emplace_back(x[u][c], p.state_bytes[u][c] / kRowBytes);
    }
    prob.AddRow("one_fraction_u" + std::to_string(u), one, 1, 1);
  }
  prob.AddRow("memory", memory, -milp::kInfinity, (p.limit_bytes - p.fixed_bytes) / kRowBytes);
  const milp::Solution sol = milp::Solve(prob, options);
  HsdpSplit out;
  out.solver = sol.solver;
  out.solve_seconds = sol.solve_seconds;
  out.variables = prob.variables();
  out.rows = prob.rows();
  if (sol.status == milp::Status::kInfeasible) return out;
  if (!sol.has_values()) {
    throw Error(std::string("HSDP planner: the MILP solver stopped without a solution (") +
                milp::ToString(sol.status) + ")");
  }
  out.feasible = true;
  out.proven_optimal = sol.status == milp::Status::kOptimal;
  out.choice.assign(units, 0);
  for (int u = 0; u < units; ++u) {
    for (int c = 0; c < k; ++c) {
      if (sol.Integer(x[u][c]) == 1) out.choice[u] = c;
    }
  }
  Price(p, out);
  return out;
}

HsdpSplit BruteForceHsdpSplit(const HsdpSplitProblem& p) {
  Check(p);
  const int units = static_cast<int>(p.seconds.size());
  const int k = static_cast<int>(p.fractions.size());
  if (units * std::log10(static_cast<double>(k)) > 7) {
    throw Error("HSDP brute force: " + std::to_string(k) + "^" + std::to_string(units) +
                " combinations are too many");
  }
  HsdpSplit best;
  best.solver = "brute force";
  best.proven_optimal = true;
  HsdpSplit at;
  at.choice.assign(units, 0);
  while (true) {
    Price(p, at);
    if (at.memory_bytes <= p.limit_bytes && (!best.feasible || at.predicted_s < best.predicted_s)) {
      best.feasible = true;
      best.choice = at.choice;
      best.predicted_s = at.predicted_s;
      best.memory_bytes = at.memory_bytes;
    }
    int u = 0;
    while (u < units && ++at.choice[u] == k) at.choice[u++] = 0;
    if (u == units) break;
  }
  return best;
}

double HsdpRingSeconds(const planners::ClusterView& c, const std::vector<std::vector<int>>& groups,
                       double bytes) {
  return bytes > 0 ? planners::AllReduceSeconds(c, groups, bytes) / 2 : 0;
}

HsdpSplitProblem BuildHsdpSplitProblem(const HsdpCostInput& in) {
  if (in.levels < 1) throw Error("HSDP planner: levels must be >= 1");
  HsdpSplitProblem p;
  for (int i = 0; i <= in.levels; ++i) p.fractions.push_back(static_cast<double>(i) / in.levels);
  const double g = static_cast<double>(in.intra.front().size());  // GPUs per server
  const double s = static_cast<double>(in.inter.front().size());  // servers
  for (double params : in.unit_params) {
    std::vector<double> seconds, states;
    const double full = params * in.gathered_bytes_per_param;
    for (double alpha : p.fractions) {
      // The lowering's split of the buffer (fsdp_units.cpp: B takes what A leaves).
      const double a = alpha * full, b = full - a;
      const double phase = std::max(HsdpRingSeconds(in.cluster, in.intra, a),
                                    HsdpRingSeconds(in.cluster, in.inter, b));
      const double shards =
          std::max(a > 0 ? planners::AllReduceSeconds(in.cluster, in.inter, a / g) : 0.0,
                   b > 0 ? planners::AllReduceSeconds(in.cluster, in.intra, b / s) : 0.0);
      if (!std::isfinite(phase) || !std::isfinite(shards)) {
        throw Error("HSDP planner: a link of the cluster view has no bandwidth (GPU-to-GPU " +
                    FormatBandwidth(in.cluster.intra_Bps.front()) + ", NIC " +
                    FormatBandwidth(in.cluster.nic_Bps.empty() ? 0 : in.cluster.nic_Bps.front()) +
                    ")");
      }
      seconds.push_back(in.micro_batches * 3 * phase + shards);
      states.push_back(in.state_bytes_per_param * (alpha * params / g + (1 - alpha) * params / s));
    }
    p.seconds.push_back(std::move(seconds));
    p.state_bytes.push_back(std::move(states));
  }
  p.fixed_bytes = in.fixed_bytes;
  p.limit_bytes = in.limit_bytes;
  return p;
}

}  // namespace stratasim
