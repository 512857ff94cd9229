#include "sim/collectives/hierarchical.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "sim/collectives/member_order.h"
#include "sim/collectives/ring.h"

namespace stratasim::sim {

bool HasUniformServers(const GroupView& view) {
  const std::vector<std::vector<int>> blocks = ServerBlocks(view);
  for (const auto& block : blocks) {
    if (block.size() != blocks[0].size()) return false;
  }
  return true;
}

void LowerHierarchical(const LowerArgs& a, FlowBuilder* b) {
  const CollectiveKind kind = a.c.kind;
  if (kind != CollectiveKind::kAllReduce && kind != CollectiveKind::kReduceScatter &&
      kind != CollectiveKind::kAllGather) {
    throw Error("hierarchical has no lowering for " + std::string(ToString(kind)));
  }
  if (!HasUniformServers(a.view)) {
    throw Error("hierarchical " + std::string(ToString(kind)) +
                " needs the same number of members on every server of the group");
  }
  const std::vector<std::vector<int>> blocks = ServerBlocks(a.view);
  if (blocks.empty()) return;
  const int servers = static_cast<int>(blocks.size());
  const int per_server = static_cast<int>(blocks[0].size());
  const double bytes = a.c.bytes;
  const double shard = bytes / per_server;  // what each member owns after the intra phase

  MemberFlows before(a.n()), after(a.n());
  // Inside each server: `steps` ring steps of bytes / per_server.
  auto intra = [&](int steps) {
    for (const auto& block : blocks) {
      RingPhase(block, steps, shard, a.stream(), before, b, &after);
    }
    before.swap(after);
  };
  // Across servers, one ring per position: `steps` steps of shard / servers.
  auto inter = [&](int steps) {
    for (int j = 0; j < per_server; ++j) {
      std::vector<int> ring;
      for (const auto& block : blocks) ring.push_back(block[j]);
      RingPhase(ring, steps, shard / servers, a.stream(), before, b, &after);
    }
    before.swap(after);
  };
  switch (kind) {
    case CollectiveKind::kAllReduce:
      intra(per_server - 1);
      inter(2 * (servers - 1));
      intra(per_server - 1);
      break;
    case CollectiveKind::kReduceScatter:
      intra(per_server - 1);
      inter(servers - 1);
      break;
    default:  // all-gather
      inter(servers - 1);
      intra(per_server - 1);
      break;
  }
}

}  // namespace stratasim::sim
