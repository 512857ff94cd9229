#include "core/collective_names.h"

#include <algorithm>

namespace stratasim {

const std::vector<std::string>& CollectiveAlgorithms(CollectiveKind kind) {
  static const std::vector<std::string> all_reduce = {
      "auto", "ring", "tree", "recursive_halving_doubling", "hierarchical", "direct"};
  static const std::vector<std::string> scatter_gather_ring = {"auto", "ring", "direct",
                                                               "hierarchical"};
  static const std::vector<std::string> rooted = {"auto", "ring", "tree"};
  static const std::vector<std::string> all_to_all = {"auto", "direct", "pairwise"};
  static const std::vector<std::string> direct = {"auto", "direct"};
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return all_reduce;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
      return scatter_gather_ring;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      return rooted;
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllV:
      return all_to_all;
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter:
      return direct;
  }
  return direct;
}

bool IsCollectiveAlgorithm(CollectiveKind kind, const std::string& name) {
  const auto& names = CollectiveAlgorithms(kind);
  return std::find(names.begin(), names.end(), name) != names.end();
}

const std::vector<std::string>& CollectiveProtocols() {
  static const std::vector<std::string> p = {"auto", "ll", "ll128", "simple"};
  return p;
}

}  // namespace stratasim
