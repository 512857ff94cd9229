// Lowers an expert-parallel training step to a task graph, given per iteration and per MoE
// layer the placement decision a strategy made (strategies/moe/placement.h) and how it
// schedules communication. Shared by DeepSpeed-MoE, FasterMoE, Prophet and Pro-Prophet.
//
// One iteration on every rank (one micro-batch, as the MoE papers train):
//   embedding; per layer: attention block + gate (pre), local permutation, dispatch
//   all-to-all, expert FFN on the tokens received, combine all-to-all, un-permutation and
//   residual (post); head; then the backward in reverse, where the combine's gradient travels
//   like the dispatch and the dispatch's like the combine; the non-expert gradients of each
//   layer are all-reduced over all ranks as soon as the layer's backward is done (stream "dp");
//   Adam over the rank's non-expert parameters and its own experts.
// Replicas (placement.h) add a parameter broadcast from the owner to the holders before the
// layer's expert compute ("Trans") and a gradient reduce back to the owner after its backward
// ("Agg") on stream "placement"; where the broadcast runs is the strategy's scheduler.
//
// Kernels: each layer's attention block is costed as two fused tasks per pass (its matrix
// products, with the shape of the largest for the GEMM efficiency model; its memory-bound
// kernels, by their bytes), so that 100-iteration runs stay small; the expert FFN per rank as
// one grouped GEMM task (both projections, batch = weight sets on the rank) and one
// elementwise task (activation and permutation) per pass.
#ifndef STRATASIM_STRATEGIES_MOE_MOE_GRAPH_H_
#define STRATASIM_STRATEGIES_MOE_MOE_GRAPH_H_

#include <string>
#include <vector>

#include "strategies/moe/moe_setup.h"
#include "strategies/moe/placement.h"
#include "strategies/plan.h"

namespace stratasim {

// When a layer's replica parameters are broadcast.
enum class TransferSchedule {
  // Just before the layer's dispatch, which waits for it: nothing hides it.
  kBeforeDispatch,
  // FasterMoE (PPoPP'22 §4): on the all-to-all stream after the dispatch steps; the tokens of
  // shadowed experts are computed in a separate kernel once the broadcast has arrived.
  kAfterDispatch,
  // Prophet's layer-wise scheduler (CLUSTER'23): issued when the previous layer's forward
  // starts, hidden behind its whole compute (and sharing links with its all-to-alls).
  kPreviousLayer,
  // Pro-Prophet's block-wise scheduler (arXiv 2411.10003 §5): split in two halves, the first
  // started with the previous block's expert compute (after its dispatch), the second with its
  // dense compute (after its combine), so neither contends with an all-to-all.
  kSplitPreviousBlock,
};

struct MoeSchedule {
  // FasterMoE's smart scheduling (PPoPP'22 §5): the all-to-all split into ranks/group_size
  // pairwise steps (group i sends to group (i + j) mod n at step j), each step's expert
  // compute starting when its tokens arrive. 0: one all-to-all per direction.
  int pairwise_group_size = 0;
  TransferSchedule transfers = TransferSchedule::kBeforeDispatch;
  // Gradient reduces of replicas on their own stream, overlapping the rest of the backward;
  // false: the backward waits for each.
  bool overlap_aggregation = false;
  // Persistent placements (strategies/moe/persistent_placement.h): a copy held in the previous
  // iteration's decision for the same layer stays on its holder, which keeps its weights,
  // gradients and Adam state ("replicas" memory from creation to drop) and applies the same
  // Adam step as the owner: the gradient aggregation is an all-reduce among the owner and the
  // holders, and only new copies receive a broadcast, of their parameters before the forward
  // (at the schedule's point) and of their optimizer state before the step (with the
  // aggregation). false: every copy is broadcast before the forward and its gradient reduced
  // to the owner, the only one with optimizer state.
  bool persistent = false;
  std::string a2a_algorithm = "auto";
  std::string dp_algorithm = "auto";
};

// decisions[t][l] for every iteration and layer. Fills plan.moe (core/moe_figures.h) over the
// measured iterations; MoeFigures::baseline is left to the planner. With
// MoeSchedule::persistent, decisions[t][l]'s copies that decisions[t - 1][l] has are kept.
Plan BuildMoePlan(const MoeSetup& st, const std::vector<std::vector<LayerDecision>>& decisions,
                  const MoeSchedule& schedule);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_MOE_GRAPH_H_
