// HSDP's planner (ISPA 2024; docs/strategies.md, "HSDP"): for each FSDP unit, the fraction
// alpha of its flat parameters in fragment A (sharded over the GPUs of each server, collectives
// inside the server) rather than fragment B (sharded over the servers, collectives on the
// NICs), from a discrete set, minimising the predicted communication time of an iteration
// under the GPU memory limit. The abstract says only that the planner "formulate[s] the
// strategy searching as an optimization problem and solve[s] it with an off-the-shelf solver";
// the formulation below is ours:
//
//   min  sum_u sum_k x[u][k] * seconds[u][k]
//   s.t. sum_k x[u][k] = 1                                    (one fraction per unit)
//        sum_u sum_k x[u][k] * state_bytes[u][k] <= limit_bytes - fixed_bytes
//        x binary
//
// where, for unit u at fraction alpha_k (both fragments' collectives run at once, so each
// phase takes its slower link):
//   seconds[u][k] = micro_batches * 3 * max(T_intra(alpha P_u), T_inter((1 - alpha) P_u))
//                 + max(T_ar_inter(alpha P_u / G), T_ar_intra((1 - alpha) P_u / S))
// (two all-gathers and one reduce-scatter per micro-batch, ring times equal; the shards'
// all-reduces once per iteration), and state_bytes the unit's mixed-precision Adam states per
// GPU, 16 (alpha P_u / G + (1 - alpha) P_u / S). With one-hot x the max of a choice is a
// constant, so this is exactly sum_u max(T_nvl(A_u), T_ib(B_u)) + gradient terms: a
// multiple-choice knapsack, solved by the MILP solver (milp.h, GLPK).
#ifndef STRATASIM_STRATEGIES_SHARDED_HSDP_PLANNER_H_
#define STRATASIM_STRATEGIES_SHARDED_HSDP_PLANNER_H_

#include <string>
#include <vector>

#include "strategies/planners/milp.h"
#include "strategies/planners/planner.h"

namespace stratasim {

// The problem as plain data, so that tests can build small instances.
struct HsdpSplitProblem {
  std::vector<double> fractions;                 // the alphas a unit may take
  std::vector<std::vector<double>> seconds;      // [unit][choice] predicted seconds/iteration
  std::vector<std::vector<double>> state_bytes;  // [unit][choice] model-state bytes per GPU
  // The rest of the per-GPU memory estimate, which no split changes: gathered weights, the
  // unit gradient and activations.
  double fixed_bytes = 0;
  double limit_bytes = 0;  // what the estimate may reach: memory_fraction x GPU memory
};

struct HsdpSplit {
  bool feasible = false;
  std::vector<int> choice;  // per unit, an index into fractions
  double predicted_s = 0;   // the objective at `choice`
  double memory_bytes = 0;  // fixed_bytes + the chosen state bytes
  bool proven_optimal = false;
  std::string solver;  // "GLPK 5.0", "brute force"
  // Wall-clock seconds in the solver: for the console, never for files or notes.
  double solve_seconds = 0;
  int variables = 0, rows = 0;  // of the MILP (0 for brute force)
};

// Solves with the MILP solver. Not feasible (feasible false) when no choice fits the memory
// limit; throws stratasim::Error when the solver stops before any solution.
HsdpSplit SolveHsdpSplit(const HsdpSplitProblem& p, const milp::Options& options = {});
// Tries every combination (fractions^units of them; at most 10^7, else stratasim::Error): the
// reference the solver is tested against.
HsdpSplit BruteForceHsdpSplit(const HsdpSplitProblem& p);

// The least memory any split needs: fixed_bytes + each unit's smallest state bytes.
double LeastHsdpMemoryBytes(const HsdpSplitProblem& p);
// "no feasible plan: ..." with the estimate, for a problem without a feasible split.
std::string HsdpNoFeasiblePlanText(const HsdpSplitProblem& p);

// What the planner prices a split with.
struct HsdpCostInput {
  planners::ClusterView cluster;
  std::vector<std::vector<int>> intra;  // fragment A's groups: the GPUs of each server
  std::vector<std::vector<int>> inter;  // fragment B's groups: one GPU per server (rails)
  std::vector<double> unit_params;      // parameters of each FSDP unit
  double gathered_bytes_per_param = 2;  // 16-bit weights and gradients
  double state_bytes_per_param = 16;    // mixed-precision Adam
  int micro_batches = 1;
  int levels = 20;  // fractions 0, 1/levels, ..., 1
  double fixed_bytes = 0;
  double limit_bytes = 0;
};

// Seconds of a ring all-gather or reduce-scatter of `bytes` over each of `groups` at once:
// half of AllReduceSeconds (link_costs.h), (n - 1) / n x bytes over the ring's slowest link
// plus (n - 1) latencies; 0 for no bytes (the lowering then issues no collective).
double HsdpRingSeconds(const planners::ClusterView& c, const std::vector<std::vector<int>>& groups,
                       double bytes);

HsdpSplitProblem BuildHsdpSplitProblem(const HsdpCostInput& in);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_SHARDED_HSDP_PLANNER_H_
