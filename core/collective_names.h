// The collective algorithms the simulator implements, by name, per collective kind. Pure data
// shared by the scenario loader (to reject a name at the edge) and sim/ (to lower it).
#ifndef STRATASIM_CORE_COLLECTIVE_NAMES_H_
#define STRATASIM_CORE_COLLECTIVE_NAMES_H_

#include <string>
#include <vector>

#include "core/task_graph.h"

namespace stratasim {

// Algorithm names of `kind`, "auto" first:
//   all_reduce      auto ring tree recursive_halving_doubling hierarchical direct
//   reduce_scatter  auto ring direct hierarchical
//   all_gather      auto ring direct hierarchical
//   broadcast       auto ring tree
//   reduce          auto ring tree
//   all_to_all(_v)  auto direct pairwise
//   gather, scatter auto direct
const std::vector<std::string>& CollectiveAlgorithms(CollectiveKind kind);
bool IsCollectiveAlgorithm(CollectiveKind kind, const std::string& name);
// Protocols as NCCL names them: "ll", "ll128", "simple" (and "auto").
const std::vector<std::string>& CollectiveProtocols();

}  // namespace stratasim

#endif  // STRATASIM_CORE_COLLECTIVE_NAMES_H_
