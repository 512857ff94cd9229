// DAPPLE's planner (Fan et al., "DAPPLE: A Pipelined Data Parallel Approach for Training Large
// Models", PPoPP'21, §4), the baseline of AutoPipe and AutoPipe-H.
//
// What it does, as the paper's planner does:
//   - a partition of the blocks into stages, chosen for the smallest "pipeline block" (the largest
//     stage time or boundary transfer of one micro-batch), jointly with the placement of each
//     stage's GPUs;
//   - each stage's GPUs chosen by one of DAPPLE's three device-assignment policies, over the
//     servers of the cluster view: Fresh First (from servers none of whose GPUs are taken yet),
//     Append First (from servers already in use), Scatter First (one at a time from every
//     server with free GPUs); every sequence of policies, one per stage, is tried;
//   - every candidate scored by DAPPLE's latency estimate of the iteration,
//       L = beta (M - 1) + sum_s T_s + sum_cuts C + max_s (AR_s - s beta)+,
//     (warm-up and steady phase, boundary transfers, the part of stage s's gradient all-reduce
//     not hidden behind the s later stages' drain), and the smallest L taken;
//   - the early-backward schedule: stage i runs S - i forwards and then alternates one backward
//     and one forward, so it keeps at most S - i micro-batches' activations (GPipe keeps M).
//     That is the order of 1F1B (PipeDream-Flush), so the plan lowers with schedule 1f1b.
//
// What differs from the paper (docs/strategies.md, "dapple"):
//   - bandwidths: the cluster view's (link_costs.h) instead of the planner's constants (NVLink
//     25 GB/s, Ethernet 3 GB/s for NCCL, 1 GB/s point to point);
//   - uniform stage width: DAPPLE may replicate stages differently (a stage of 3 GPUs beside one
//     of 5); the pipeline lowering gives every stage the same data degree, so the planner
//     chooses the number of stages S (and the data degree d = GPUs / (S x tensor) that follows)
//     and gives every stage d tensor groups;
//   - a policy that runs out of its preferred servers takes the others' GPUs instead of failing;
//   - memory: a candidate whose stage i does not hold its model states and S - i micro-batches'
//     activations in the GPUs' memory (PlannerInput::memory_fraction) is not chosen.
#ifndef STRATASIM_STRATEGIES_PLANNERS_DAPPLE_H_
#define STRATASIM_STRATEGIES_PLANNERS_DAPPLE_H_

#include <string>
#include <vector>

#include "strategies/planners/planner.h"

namespace stratasim::planners {

enum class DapplePolicy { kFreshFirst, kAppendFirst, kScatterFirst };
const char* DapplePolicyName(DapplePolicy p);

struct DappleSettings {
  // Choose the number of stages (and the data degree) among those the GPUs allow; else plan for
  // PlannerInput::stages x data.
  bool choose_stages = true;
  // Bytes per parameter of the gradients the data-parallel all-reduce carries.
  double grad_bytes_per_param = 2;
  // Bound on the placements tried per stage count (sequences of policies that give different
  // GPU sets); the rest are not tried, and the notes say so.
  int max_placements = 512;
};

// The GPUs of each stage (replica-major, tensor index fastest) when the ranks are numbered in
// `order` (ParallelLayout).
std::vector<std::vector<int>> OrderLayout(int stages, int tensor, int data,
                                          const std::string& order);

// Stage s's GPUs under `policy` when `occupied` (per rank) are taken: `units` tensor groups of
// `unit` consecutive ranks each, in the order the policy takes them. Marks them occupied. Empty
// when fewer units are free.
std::vector<int> DapplePlace(const ClusterView& c, std::vector<bool>& occupied, int units, int unit,
                             DapplePolicy policy);

// DAPPLE's latency estimate (see above) of a plan: `bounds` over the blocks, `gpus[s]` stage s's
// ranks (replica-major, tensor index fastest), `tensor` GPUs per tensor group, `micro_batches`
// per replica. `stage_seconds` receives T_s.
double DappleLatency(const CostProfile& p, const ClusterView& c, const std::vector<int>& bounds,
                     const std::vector<std::vector<int>>& gpus, int tensor, int micro_batches,
                     double grad_bytes_per_param, std::vector<double>* stage_seconds = nullptr);

// The rank order (ParallelLayout) whose layout is plan.ranks, which it clears; "tpd" when the
// plan has no mapping. When no order lays the ranks out so, it returns "tpd" and leaves them
// (the lowering then refuses the explicit mapping).
std::string TakeRankOrder(PlannedPipeline& plan);

// Plans `in` (its profile, cluster, tensor degree, micro-batches of the global batch:
// in.micro_batches x in.data). Throws stratasim::Error when no candidate fits in memory.
PlannedPipeline PlanDapple(const PlannerInput& in, const DappleSettings& settings);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_DAPPLE_H_
