#include "sim/collectives/alpha_beta.h"

#include <algorithm>
#include <limits>

#include "sim/collectives/member_order.h"
#include "sim/collectives/registry.h"

namespace stratasim::sim {
namespace {

double OrInfinity(double bound_Bps) {
  return bound_Bps > 0 ? bound_Bps : std::numeric_limits<double>::infinity();
}

}  // namespace

AlphaBeta MakeAlphaBeta(const GroupView& view, const CollectiveAlgorithm& algorithm,
                        CollectiveKind kind, Protocol p) {
  AlphaBeta m;
  m.n = static_cast<int>(view.members.size());
  const auto blocks = ServerBlocks(view);
  m.servers = std::max<int>(1, blocks.size());
  for (const auto& b : blocks) m.per_server = std::max<int>(m.per_server, b.size());
  m.nics = std::max(1, view.max_nics_per_server);
  m.multi = m.servers > 1;
  m.base_s = GroupBaseLatencySeconds(view, algorithm.nccl, p);
  // Rings, trees' chains and hierarchical's rings step between neighbours of ServerBlocks,
  // which follow a partial NVLink mesh where there is one (GroupView::ring_intra_*).
  const bool neighbours = algorithm.neighbour_steps;
  const double intra_latency_s = neighbours ? view.ring_intra_latency_s : view.intra_latency_s;
  const HopKind intra_hop = neighbours && view.ring_intra_fabric == IntraFabric::kNvLink
                                ? HopKind::kNvLink
                                : IntraHop(view);
  m.intra_step_s = intra_latency_s + StepLatencySeconds(algorithm.nccl, p, intra_hop);
  m.inter_step_s = view.inter_latency_s + StepLatencySeconds(algorithm.nccl, p, HopKind::kNet);
  // A measured hop (calibrate --fabric) costs its measured latency per step, or the route's
  // when that is longer: what ApplyProtocol's flows pay (sim/collectives/protocol.h).
  if (auto measured = MeasuredStepSeconds(view, p, intra_hop)) {
    m.intra_step_s = std::max(*measured, intra_latency_s);
  }
  if (auto measured = MeasuredStepSeconds(view, p, HopKind::kNet)) {
    m.inter_step_s = std::max(*measured, view.inter_latency_s);
  }
  m.intra_Bps = neighbours ? view.ring_intra_Bps : view.intra_Bps;
  m.nvlink_cycles = neighbours ? view.nvlink_cycles : 0;
  m.inter_Bps = view.inter_Bps;
  m.inter_gpu_Bps = view.nic_share_per_member_Bps;
  m.wire = WireBytesFactor(p);
  m.flow_intra_Bps = OrInfinity(ProtocolMaxRateBps(p, algorithm.nccl, kind, m.multi, m.intra_Bps));
  m.flow_inter_Bps =
      OrInfinity(ProtocolMaxRateBps(p, algorithm.nccl, kind, m.multi, view.inter_Bps));
  return m;
}

}  // namespace stratasim::sim
