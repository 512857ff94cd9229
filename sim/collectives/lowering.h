// Chooses and lowers collective algorithms.
#ifndef STRATASIM_SIM_COLLECTIVES_LOWERING_H_
#define STRATASIM_SIM_COLLECTIVES_LOWERING_H_

#include <string>

#include "core/scenario.h"
#include "core/task_graph.h"
#include "sim/collectives/flow_program.h"
#include "sim/collectives/group_view.h"

namespace stratasim::sim {

struct CollectiveChoice {
  std::string algorithm;  // a name from core/collective_names.h, never "auto"
  std::string protocol;   // "ll", "ll128" or "simple", never "auto"
  int channels = 1;
};

// Resolves "auto" (in the collective's own hint, then the scenario's per-kind setting) with the
// tuner: the algorithm/protocol/channels of least predicted time for this size, group and
// topology, as NCCL's tuning model does. A non-auto hint or setting is obeyed.
CollectiveChoice ChooseCollective(const Collective& c, const GroupView& view,
                                  const CollectiveSettings& settings);

// The tuner's alpha-beta prediction for one choice (no contention), in seconds.
double PredictCollectiveSeconds(const Collective& c, const GroupView& view,
                                const CollectiveChoice& choice);

// Lowers `c` with `choice` at `fidelity` (kStep or kStream; kAnalytic is handled by the
// executor from PredictCollectiveSeconds). Throws stratasim::Error for a choice the kind does
// not have.
FlowProgram LowerCollective(const Collective& c, const GroupView& view,
                            const CollectiveChoice& choice, Fidelity fidelity);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_LOWERING_H_
