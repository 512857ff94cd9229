// Oases' planner (Li et al., "Automated Tensor Model Parallelism with Overlapped Communication
// for Efficient Foundation Model Training", arXiv 2305.16121, TPDS; code lucasleesw/oases,
// oases/mpu/planner.py): an integer linear program that picks the tensor-parallel degree of
// every sub-layer (a transformer layer's attention half and its MLP half, 2L nodes) so that the
// overlap-aware time of one micro-batch is least and the memory fits.
//
// Oases splits each micro-batch into two sub-batches: the TP all-reduce of one runs while the
// other computes (strategies/tensor/oases.h). With c_i, m_i the forward compute and forward
// collectives of sub-layer i for one sub-batch, r_i its backward compute plus its
// (communication-free) recomputation and n_i its backward collectives, the two sub-batches
// alternate as
//   forward:  c_0, then for each i: max(c_i, m_i) (sub-batch 2 computes i while sub-batch 1's
//             all-reduce of i runs), then max(c_{i+1}, m_i) (sub-batch 1 computes i+1 while
//             sub-batch 2's all-reduce of i runs), and m_{n-1} exposed at the end;
//   backward: r_{n-1}, then for each i from the last: max(r_i, n_i), then max(r_i, n_{i+1}),
//             and n_0 exposed at the end.
// These are the paper's terms max(comp_i, comm_i) + max(comp_{i+1}, comm_i) and
// max(bp_i + fp_i, comm_i). planner.py prices the cross term max(c_{i+1}, m_i) at sub-layer i's
// degree; here it is an edge term, priced at both sub-layers' own degrees, exact. An edge between
// two sub-layers of different degrees also pays the re-shard of the activation (forward) or its
// gradient (backward) between the two groupings. Edge costs are linearised with one auxiliary
// variable per edge and degree pair, e[i][a][b] = x[i][a] x[i+1][b], enforced by
// sum_b e[i][a][b] = x[i][a] and sum_a e[i][a][b] = x[i+1][b] (Alpa's formulation, which
// planner.py adapts).
//
// Memory per GPU: the sub-layers' model states and the activations kept from forward to
// backward (both sub-batches), plus the largest working set of one sub-layer's backward (its
// recomputed activations), must stay within the limit (the paper: 0.95 of the GPU's memory).
// The maximum is linearised with one continuous variable z >= working_i for every i.
//
// The MILP is solved by milp.h (GLPK). The planner is a pure function of the profile and the
// limit; oases_profile.h builds the profile from the simulator's own cost model.
#ifndef STRATASIM_STRATEGIES_PLANNERS_OASES_PLANNER_H_
#define STRATASIM_STRATEGIES_PLANNERS_OASES_PLANNER_H_

#include <string>
#include <vector>

#include "core/error.h"
#include "strategies/planners/milp.h"

namespace stratasim::planners {

// One sub-layer at one candidate degree, on one GPU of its tensor group. Times are for one
// sub-batch; bytes for the whole micro-batch (both sub-batches).
struct OasesCost {
  double forward_s = 0;        // forward kernels, collectives excluded
  double backward_s = 0;       // input- and weight-gradient kernels
  double recompute_s = 0;      // the forward's kernels again before the backward (0: none)
  double forward_comm_s = 0;   // the sub-layer's tensor-parallel collectives in the forward
  double backward_comm_s = 0;  // ... and in the backward
  double state_bytes = 0;      // parameters, gradients and optimizer states held
  double kept_bytes = 0;       // activations kept from the forward to the backward
  double working_bytes = 0;    // held only while this sub-layer's backward runs
};

struct OasesProfile {
  std::vector<int> degrees;                   // candidate TP degrees, increasing
  std::vector<std::string> names;             // per sub-layer: "layer0.attn", "layer0.mlp", ...
  std::vector<std::vector<OasesCost>> costs;  // [sub-layer][degree index]
  // reshard_s[i][a][b]: seconds to re-shard between sub-layer i at degrees[a] and sub-layer
  // i + 1 at degrees[b], forward and backward together (0 when a == b).
  std::vector<std::vector<std::vector<double>>> reshard_s;

  int SubLayers() const { return static_cast<int>(costs.size()); }
  int Degrees() const { return static_cast<int>(degrees.size()); }
};

struct OasesPlan {
  std::vector<int> degrees;  // the chosen TP degree of each sub-layer
  std::vector<int> choice;   // its index into OasesProfile::degrees
  double objective_s = 0;    // the MILP's objective: forward + backward of one micro-batch
  double memory_bytes = 0;   // the plan's peak per GPU, as the constraint counts it
  milp::Status status = milp::Status::kNoSolution;  // kOptimal or kFeasible (time limit)
  std::string solver;                               // "GLPK 5.0"
  int variables = 0, rows = 0;                      // the MILP's size
  // Wall-clock seconds of the solve: for the console only, never files or notes.
  double solve_seconds = 0;
};

// Throws stratasim::Error naming what is inconsistent in `p`: no sub-layer or degree, degrees
// not increasing, a cost table or re-shard table of the wrong shape, a negative or NaN figure.
void CheckOasesProfile(const OasesProfile& p);

// Whether sub-layers at degrees a and b may be adjacent: one must divide the other, since the
// re-shard all-gathers over the larger group's ranks that hold one shard of the smaller.
bool OasesCompatible(int a, int b);

// The time the MILP's objective gives assignment `choice` (a degree index per sub-layer;
// infinite when two adjacent degrees are not compatible), and the memory its constraint counts:
// the brute-force reference of the tests.
double OasesSeconds(const OasesProfile& p, const std::vector<int>& choice);
double OasesMemoryBytes(const OasesProfile& p, const std::vector<int>& choice);

// Thrown by PlanOases when no assignment fits the memory limit.
class OasesNoPlan : public Error {
 public:
  OasesNoPlan(const std::string& what, double needed_bytes, double limit_bytes,
              double solve_seconds)
      : Error(what),
        needed_bytes(needed_bytes),
        limit_bytes(limit_bytes),
        solve_seconds(solve_seconds) {}
  double needed_bytes;  // the least memory any assignment needs (infinite: none is possible)
  double limit_bytes;
  double solve_seconds;  // wall-clock, both MILPs: for the console only
};

// Solves the MILP above under `memory_limit_bytes` per GPU; with `required_degree` > 0 at least
// one sub-layer takes that degree (the lowering sizes micro-batches by the largest degree a
// plan uses, so the caller fixes it). Throws OasesNoPlan "no feasible plan" naming the least
// memory any assignment needs (found by a second MILP that minimises memory) and the limit when
// nothing fits, and stratasim::Error when the solver stops without a solution or the required
// degree is not a candidate.
OasesPlan PlanOases(const OasesProfile& p, double memory_limit_bytes, int required_degree = 0,
                    const milp::Options& options = {});

// The degrees by runs of equal ones: "layer0.attn-layer11.mlp t=4, layer12.attn-layer23.mlp t=2".
std::string OasesDegreesText(const std::vector<std::string>& names,
                             const std::vector<int>& degrees);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_OASES_PLANNER_H_
