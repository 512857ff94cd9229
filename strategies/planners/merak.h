// Merak (Lai et al. 2023, "Merak: An Efficient Distributed DNN Training Framework with Automated
// 3D Parallelism for Giant Foundation Models", IEEE TPDS 34(5)): a 3D-parallel plan with its
// runtime's three techniques (§4):
//   - the shifted critical path schedule and its simpler variants (merak_schedule.cpp);
//   - stage-aware recomputation: a stage that holds fewer micro-batches in flight recomputes
//     fewer layers (StageAwareRecomputeRatios);
//   - sub-pipelined tensor parallelism (strategies/tensor/tp_layer.h, SubPipeline).
#ifndef STRATASIM_STRATEGIES_PLANNERS_MERAK_H_
#define STRATASIM_STRATEGIES_PLANNERS_MERAK_H_

#include <string>
#include <vector>

#include "core/strategy_options.h"
#include "strategies/plan.h"
#include "strategies/planners/planner.h"

namespace stratasim::planners {

// Merak's stage-aware recomputation ratios (its pipeline module's activation_checkpoint_ratio
// given as one number r0): stage i < S - 1 recomputes the share
//   r_i = 1 - (1 - r0) (S - 1) / (S - 1 - i)
// of its layers, clipped to [0, 1], and the last stage none. Stage 0 holds S micro-batches in
// flight under 1F1B and recomputes r0; stage i holds S - i, and r_i keeps the activations a
// stage holds about equal: (1 - r_i)(S - 1 - i) = (1 - r0)(S - 1) layers' worth of full
// activations. Needs 0 <= r0 <= 1 and stages >= 1.
std::vector<double> StageAwareRecomputeRatios(double r0, int stages);

// The number of a stage's first `layers` layers that `ratio` checkpoints: floor(ratio x layers)
// (a hair of tolerance so that 0.25 x 4 is 1 even when 0.25 came out of a division).
int CheckpointedLayers(double ratio, int layers);

// What a merak strategy asks for (its options, MerakOptions).
struct MerakSettings {
  // 1f1b | last_no_recompute | pre_recompute | shifted_critical_path
  std::string schedule = "shifted_critical_path";
  // r0 of stage-aware recomputation; < 0: the smallest multiple of 0.05 with which every stage's
  // predicted peak fits memory_fraction of its GPUs (1 when none does).
  double recompute_ratio = -1;
  int tp_subpipeline = 0;             // 0-3
  std::string partition = "uniform";  // uniform | params
};

// Merak's partition of the profile's blocks into `stages`: "uniform" gives each stage as many
// transformer blocks as it can (the first stages one more when they do not divide), the
// embedding joining the first and the head the last, as Merak's uniform stage assignment of
// its layers; "params" balances the parameters a stage holds (min-max over contiguous splits),
// as Merak's "parameters" assignment. Returns stages + 1 bounds.
std::vector<int> MerakPartition(const CostProfile& profile, int stages,
                                const std::string& partition);

// Per block: whether stage-aware recomputation with `ratios` checkpoints it (each stage's first
// CheckpointedLayers(r_i, its recomputable blocks) recomputable blocks).
std::vector<bool> StageAwareRecompute(const CostProfile& profile, const std::vector<int>& bounds,
                                      const std::vector<double>& ratios);

// The plan Merak makes on `in`: partition, stage-aware recomputation (with shifted_critical_path
// on more than two stages, stage p - 2 recomputes as stage p - 3, as Merak's engine sets it), the
// schedule and the sub-pipelining level; its predicted memory per stage and 1F1B time in the
// notes. Pure and deterministic.
PlannedPipeline PlanMerakPipeline(const PlannerInput& in, const MerakSettings& settings);

// Kind "merak": the planner options every planner shares (planner_options.h) and Merak's own
// (schedule, recompute_ratio, tp_subpipeline, partition).
const OptionSpecs& MerakOptions();
// Reads the options, builds the cost profile (profile.h), plans with PlanMerakPipeline and
// lowers the plan (lower_plan.h).
Plan PlanMerak(const Scenario& s, const StrategySpec& spec);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_MERAK_H_
