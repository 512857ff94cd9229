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
  // Inside each server: `steps` ring steps of bytes / per_server, split over the server's rings
  // (ServerRings: on NVLink cycles, each cycle both ways); a member is done when it is in all.
  auto intra = [&](int steps) {
    for (const auto& block : blocks) {
      const std::vector<std::vector<int>> rings = ServerRings(a.view, block);
      for (int m : block) after[m].clear();
      for (const std::vector<int>& ring : rings) {
        MemberFlows exit(a.n());
        RingPhase(ring, steps, shard / static_cast<double>(rings.size()), a.stream(), before, b,
                  &exit);
        for (int m : block) after[m].insert(after[m].end(), exit[m].begin(), exit[m].end());
      }
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
