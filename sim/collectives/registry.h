// The collective registry's simulator half: how each algorithm of
// core/collective_algorithms.def runs. Each algorithm's file (sim/collectives/<name>.cpp)
// defines its entry, collective_algorithms::<name>, beside its lowering; the list in
// core/collective_algorithms.def registers it (docs/collectives.md, "Adding an algorithm").
#ifndef STRATASIM_SIM_COLLECTIVES_REGISTRY_H_
#define STRATASIM_SIM_COLLECTIVES_REGISTRY_H_

#include <string>
#include <vector>

#include "core/task_graph.h"
#include "sim/collectives/alpha_beta.h"
#include "sim/collectives/flow_builder.h"
#include "sim/collectives/group_view.h"
#include "sim/collectives/lower_args.h"
#include "sim/collectives/protocol.h"

namespace stratasim::sim {

struct CollectiveAlgorithm {
  // Whose NCCL figures its steps pay (protocol.h): the tree's or the ring's latencies and
  // LL/LL128 rates.
  NcclAlgorithm nccl = NcclAlgorithm::kRing;
  // Whether it splits the buffer over channels; the others run on one.
  bool uses_channels = false;
  // Whether `auto` may pick it: what NCCL runs (validate compares with real NCCL).
  bool chosen_by_auto = false;
  // Where `auto` may pick it; null: wherever chosen_by_auto.
  bool (*auto_fits)(const GroupView& view) = nullptr;
  // Whether its steps go between neighbours of ServerBlocks (ring order), which follow a
  // partial NVLink mesh where there is one (GroupView::ring_intra_*, nvlink_cycles); else
  // between any two members, at the view's slowest intra-server hop.
  bool neighbour_steps = false;
  // Its flows for the kinds it serves (LowerCollective has checked the kind, the channels and
  // the root, and calls it for two or more members and bytes to move).
  void (*lower)(const LowerArgs& args, FlowBuilder* b) = nullptr;
  // Its alpha-beta time (PredictCollectiveSeconds), in seconds.
  double (*predict)(const PredictArgs& args) = nullptr;
};

// The entries, each defined in its algorithm's file.
namespace collective_algorithms {
#define STRATASIM_COLLECTIVE_ALGORITHM(name, ...) extern const CollectiveAlgorithm name;
#include "core/collective_algorithms.def"
#undef STRATASIM_COLLECTIVE_ALGORITHM
}  // namespace collective_algorithms

// The entry of `name` for `kind`. Throws stratasim::Error naming the kind and its algorithms
// when the kind has no such algorithm (CheckAlgorithm).
const CollectiveAlgorithm& FindCollectiveAlgorithm(CollectiveKind kind, const std::string& name);

// Throws stratasim::Error naming the kind, `name` and the known algorithms unless `name` is one
// of CollectiveAlgorithms(kind) (core/collective_names.h), "auto" only if `allow_auto`.
void CheckAlgorithm(CollectiveKind kind, const std::string& name, bool allow_auto);

// The algorithms `auto` chooses among for `kind` on `view`, in the list's order.
std::vector<std::string> AutoCandidates(CollectiveKind kind, const GroupView& view);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_REGISTRY_H_
