// Piper's planner (Tarnawski et al., "Piper: Multidimensional Planner for DNN Parallelization",
// NeurIPS'21, §4), the baseline of AutoPipe.
//
// What it does, as the paper's algorithm does on a chain of blocks (the model's layers split
// into attention and MLP halves are a chain, so Piper's downsets are the prefixes):
//   - a dynamic programme over contiguous stages: dp[s][j], the smallest "time per sample" of
//     the slowest of stages [0, s) holding blocks [0, j), is min over i of
//     max(dp[s - 1][i], TPS(stage s - 1 = blocks [i, j))). Objective: the smallest largest
//     stage time per sample; no bubble term (Piper assumes enough micro-batches);
//   - a stage's configurations: tensor degree t, data degree d, and recomputation per block;
//   - TPS = (forward + backward (+ recomputation) of one micro-batch) / (d x micro-batch)
//         + 2 (input + output boundary bytes) / (d x micro-batch) / bandwidth
//         + 4 (d - 1) w / (d N) / bandwidth,
//     w the stage's gradient bytes, N the samples of the global batch (Piper's all-reduce term);
//   - memory: stage s (0-based) of S keeps min(S - s, M) micro-batches' activations (1F1B); when
//     that does not fit, a knapsack chooses which blocks to recompute at the least recomputation
//     time so that the stage fits; a stage that cannot fit even so is not a candidate, so a plan
//     that does not fit in memory is never chosen.
//
// What differs from the paper (docs/strategies.md, "piper"):
//   - one (t, d) for all stages: the pipeline lowering needs every stage to have the same
//     tensor and data degree, so the DP runs once per (t, d) whose t x d divides the GPUs, with
//     S = GPUs / (t x d) stages, and the smallest objective is kept (Piper mixes (t, d) per
//     stage in one DP);
//   - bandwidths: the cluster view's (link_costs.h), for the links the default mapping puts each
//     boundary and each data-parallel group on (Piper: one bandwidth);
//   - the knapsack is exact over groups of identical blocks (same bytes, same recomputation
//     time), not over Piper's discretised memory.
#ifndef STRATASIM_STRATEGIES_PLANNERS_PIPER_H_
#define STRATASIM_STRATEGIES_PLANNERS_PIPER_H_

#include <vector>

#include "strategies/planners/planner.h"

namespace stratasim::planners {

struct PiperInput {
  // One cost profile per tensor degree considered (CostProfile::tensor), same blocks in each.
  std::vector<CostProfile> profiles;
  ClusterView cluster;
  int global_micro_batches = 1;  // micro-batches of profile.micro_batch samples per iteration
  double memory_fraction = 1;
  double grad_bytes_per_param = 2;  // bytes per parameter of the gradients all-reduced
  int min_stages = 2;               // the fewest stages a plan may have
  int data = 0;                     // the only data degree tried; 0: every one
};

// A stage's recomputation as the knapsack chose it.
struct PiperStage {
  bool fits = false;
  std::vector<bool> recompute;  // per block of the stage
  double seconds = 0;           // forward + backward + recomputation of one micro-batch
  double memory_bytes = 0;      // predicted peak per GPU
};

// The knapsack: the least recomputation that fits blocks [first, end) of `profile`, kind `kind`,
// with `in_flight` micro-batches in `capacity` bytes.
PiperStage PiperKnapsack(const CostProfile& profile, int kind, int first, int end, int in_flight,
                         double capacity);

// Plans `in`. Throws stratasim::Error when no (t, d) has a plan that fits in memory.
PlannedPipeline PlanPiper(const PiperInput& in);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_PIPER_H_
