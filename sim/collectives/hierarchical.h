// Hierarchical (two-level) collectives, as Horovod's hierarchical all-reduce and NCCL's
// intra-node/inter-node split do: all-reduce = reduce-scatter inside each server (over NVLink
// or PCIe), all-reduce across servers among the GPUs of the same position in their server
// (each over its own NIC, all positions at once), all-gather inside each server.
// Reduce-scatter = inside, then across; all-gather = across, then inside. Each phase is a ring
// (sim/collectives/ring.h), so `stream` fidelity makes each phase's edges one flow each.
#ifndef STRATASIM_SIM_COLLECTIVES_HIERARCHICAL_H_
#define STRATASIM_SIM_COLLECTIVES_HIERARCHICAL_H_

#include "sim/collectives/flow_builder.h"
#include "sim/collectives/lower_args.h"

namespace stratasim::sim {

// all_reduce, reduce_scatter, all_gather; every server must hold the same number of members
// (else stratasim::Error). Channels are not used: the cross-server phase already runs one ring
// per position, hence per NIC.
void LowerHierarchical(const LowerArgs& a, FlowBuilder* b);

// Whether every server of the view holds the same number of members.
bool HasUniformServers(const GroupView& view);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_HIERARCHICAL_H_
