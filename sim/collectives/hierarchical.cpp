#include "sim/collectives/hierarchical.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "sim/collectives/member_order.h"
#include "sim/collectives/registry.h"
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

namespace {

double PredictHierarchical(const PredictArgs& a) {
  const AlphaBeta& m = a.m;
  const int s = m.servers, k = m.per_server;
  const double S = a.wire_bytes();
  if (!HasUniformServers(a.view)) return std::numeric_limits<double>::infinity();
  // One flow per ring edge: each at most the protocol's rate. Along NVLink cycles the
  // server's part runs as 2 x cycles rings (ServerRings), each on NVLinks of its own.
  const int rings = m.nvlink_cycles > 0 ? 2 * m.nvlink_cycles : 1;
  const double intra =
      (k - 1) * (m.intra_step_s + S / k / rings / std::min(m.intra_Bps, m.flow_intra_Bps));
  const double inter =
      (s - 1) * (m.inter_step_s + S / k / s / std::min(m.inter_gpu_Bps, m.flow_inter_Bps));
  return m.base_s + (a.c.kind == CollectiveKind::kAllReduce ? 2 * (intra + inter) : intra + inter);
}

// It needs equal servers, and inside one server it is the plain ring.
bool HierarchicalFits(const GroupView& view) {
  return view.num_servers >= 2 && HasUniformServers(view);
}

}  // namespace

// Not one of NCCL's algorithms, but its intra/inter split: auto may pick it across equal
// servers. Its cross-server phase already runs one ring per position, hence per NIC: no
// channels.
const CollectiveAlgorithm collective_algorithms::hierarchical{
    NcclAlgorithm::kRing,  // nccl
    false,                 // uses_channels
    true,                  // chosen_by_auto
    HierarchicalFits,      // auto_fits
    true,                  // neighbour_steps
    LowerHierarchical,     // lower
    PredictHierarchical,   // predict
};

}  // namespace stratasim::sim
