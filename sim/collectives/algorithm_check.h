// Checks an algorithm name against the collective kind's list (core/collective_names.h).
#ifndef STRATASIM_SIM_COLLECTIVES_ALGORITHM_CHECK_H_
#define STRATASIM_SIM_COLLECTIVES_ALGORITHM_CHECK_H_

#include <string>

#include "core/task_graph.h"

namespace stratasim::sim {

// Throws stratasim::Error naming the kind, `name` and the known algorithms unless `name` is one
// of CollectiveAlgorithms(kind) (with "auto" only if `allow_auto`).
void CheckAlgorithm(CollectiveKind kind, const std::string& name, bool allow_auto);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_ALGORITHM_CHECK_H_
