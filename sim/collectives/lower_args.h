// What every algorithm family's lowering receives: the collective, where its members sit, the
// resolved root and channel count, and the fidelity. Internal to sim/collectives/.
#ifndef STRATASIM_SIM_COLLECTIVES_LOWER_ARGS_H_
#define STRATASIM_SIM_COLLECTIVES_LOWER_ARGS_H_

#include "core/scenario.h"
#include "core/task_graph.h"
#include "sim/collectives/group_view.h"

namespace stratasim::sim {

struct LowerArgs {
  const Collective& c;
  const GroupView& view;
  int root = 0;      // member index of c.root (broadcast, reduce, gather, scatter)
  int channels = 1;  // >= 1; families without channels ignore it
  Fidelity fidelity = Fidelity::kStep;

  int n() const { return static_cast<int>(c.ranks.size()); }
  bool stream() const { return fidelity == Fidelity::kStream; }
};

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_LOWER_ARGS_H_
