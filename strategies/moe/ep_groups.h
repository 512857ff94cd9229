// Expert-parallel groups (DeepSpeed-MoE, Rajbhandari et al., ICML'22 §4; deepspeed/utils/groups.py
// _create_expert_and_data_parallel): `ep` consecutive ranks form an expert-parallel group
// ({0..ep-1}, {ep..2ep-1}, ...) holding every expert once, the all-to-all's members; the ranks
// at the same position of every group ({i, i+ep, i+2ep, ...}) hold the same experts and form an
// expert-data-parallel group, whose expert gradients are all-reduced.
//
// A planner decides each group on its own rows of the routing matrix (its ranks' tokens, all
// experts), as if the group were the whole cluster; the groups' decisions are then joined into
// one LayerDecision over all ranks whose all-to-all matrix is block-diagonal by group.
#ifndef STRATASIM_STRATEGIES_MOE_EP_GROUPS_H_
#define STRATASIM_STRATEGIES_MOE_EP_GROUPS_H_

#include <functional>
#include <vector>

#include "strategies/moe/placement.h"

namespace stratasim {

// Members of expert-parallel group g: ranks g*ep .. g*ep+ep-1.
std::vector<int> ExpertParallelGroup(int group, int ep);
// Members of the expert-data-parallel group of group position i over `ranks`: i, i+ep, ...
std::vector<int> ExpertDataParallelGroup(int position, int ep, int ranks);

// The rows of expert-parallel group g (its ranks' tokens for every expert).
TokenMatrix GroupRows(const TokenMatrix& t, int group, int ep);

// The replicas of expert-parallel group g among `all` (a joined decision's), back in the
// group's own ranks: JoinGroups' inverse for them.
std::vector<Replica> GroupReplicas(const std::vector<Replica>& all, int group, int ep);

// One decision over all ranks from each group's decision, in group order: block-diagonal
// all-to-all, per-rank vectors concatenated, replica owners and holders moved to global ranks.
LayerDecision JoinGroups(const std::vector<LayerDecision>& groups);

// plan(g, rows of group g) for every expert-parallel group of `t`, joined. With one group
// (ep = the ranks) it is plan(0, t) itself.
LayerDecision PerExpertParallelGroup(
    const TokenMatrix& t, int ep,
    const std::function<LayerDecision(int, const TokenMatrix&)>& plan);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_EP_GROUPS_H_
