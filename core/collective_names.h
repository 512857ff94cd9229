// The collective algorithms by name, and the collective kinds each serves: the core half of
// the collective registry (core/collective_algorithms.def), shared by the scenario loader and
// the planners (to reject a name at the edge) and sim/ (whose entries add how each runs).
#ifndef STRATASIM_CORE_COLLECTIVE_NAMES_H_
#define STRATASIM_CORE_COLLECTIVE_NAMES_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/task_graph.h"

namespace stratasim {

// One line of core/collective_algorithms.def.
struct CollectiveAlgorithmName {
  std::string_view name;
  unsigned kinds = 0;  // bit k: serves CollectiveKind k

  bool Serves(CollectiveKind kind) const { return (kinds >> static_cast<unsigned>(kind)) & 1u; }
};

// Every algorithm, in the order of the list.
const std::vector<CollectiveAlgorithmName>& AllCollectiveAlgorithms();

// Algorithm names of `kind`, "auto" first, then the list's order:
//   all_reduce      auto ring tree recursive_halving_doubling hierarchical direct
//   reduce_scatter  auto ring hierarchical direct
//   all_gather      auto ring hierarchical direct
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
