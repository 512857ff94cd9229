// HPH's topology designer (Hybrid Parallelism on Heterogeneous clusters, CLUSTER'22): which GPUs
// form each pipeline stage on a cluster of several GPU kinds.
//
// A stage's data-parallel group (its replicas) all-reduces the stage's gradients every iteration,
// while a stage boundary carries one activation per micro-batch; the gradients are usually the
// larger volume, so the designer puts each stage's GPUs next to each other: same server, and
// under one PCIe switch where the server has them, so that its all-reduce runs on the fastest
// links and the stage boundaries cross the slower ones. It keeps GPUs of one kind together, so a
// stage is of one kind where the counts allow, and its time can be balanced against the others'
// (hph_partition.h). Which kind takes the first stages is left open: the first stages of 1F1B
// hold the most micro-batches' activations, so the order matters for memory, and the planner
// (hph.h) tries every order of the kinds.
#ifndef STRATASIM_STRATEGIES_PLANNERS_HPH_TOPOLOGY_H_
#define STRATASIM_STRATEGIES_PLANNERS_HPH_TOPOLOGY_H_

#include <string>
#include <vector>

#include "strategies/planners/planner.h"

namespace stratasim::planners {

// Which GPUs form each stage, and what each stage is costed on.
struct StageLayout {
  // ranks[(replica * stages + stage) * tensor + tensor_index]: the GPU of each position.
  std::vector<int> ranks;
  // Per stage: the kind its time is taken from (the slowest among its GPUs: its replicas wait
  // for each other in the gradient all-reduce) and the bytes one of its GPUs may fill (the
  // smallest memory among them, times the input's memory_fraction).
  std::vector<int> stage_kind;
  std::vector<double> stage_budget;
  bool default_order = false;  // the lowering's own rank order
};

// The layout of the lowering's rank order `order` (strategies/parallel_layout.h; "tpd": tensor,
// then stages, then replicas), costed the same way.
StageLayout DefaultLayout(const PlannerInput& in, const std::string& order = "tpd");

// The rank order (parallel_layout.h) that numbers the positions as `ranks` does, or "" when
// none does.
std::string RankOrderOf(const PlannerInput& in, const std::vector<int>& ranks);

// The designer's layouts, one per order of the cluster's GPU kinds (every order, lexicographic
// over the kinds' indices, when there are at most four kinds; else fastest first and slowest
// first): the GPUs sorted by kind in that order, then by server, PCIe switch and rank, and cut
// into stages of tensor x data consecutive GPUs, each replica's tensor group consecutive too.
// Throws stratasim::Error when the degrees do not match the cluster or the profile.
std::vector<StageLayout> DesignLayouts(const PlannerInput& in);

// "A100-SXM4-80GB x2, V100-SXM2 x2": the kinds of the stages in order, runs collapsed.
std::string StageKindsText(const CostProfile& profile, const std::vector<int>& stage_kind);

// CheckPlannerInput (planner.h), and that the degrees use every GPU of the cluster; throws
// stratasim::Error.
void CheckHphInput(const PlannerInput& in);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_HPH_TOPOLOGY_H_
