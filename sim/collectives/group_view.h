// Where the members of a collective sit in the cluster: what topology-aware algorithms
// (hierarchical, multi-channel rings striped over NICs) and the tuner need to know.
#ifndef STRATASIM_SIM_COLLECTIVES_GROUP_VIEW_H_
#define STRATASIM_SIM_COLLECTIVES_GROUP_VIEW_H_

#include <map>
#include <string>
#include <vector>

#include "core/cluster.h"

namespace stratasim::sim {

struct GroupMember {
  int rank = 0;
  int server = 0;  // global server index
  int local = 0;   // GPU index inside its server
  int nic = 0;     // index of the NIC serving it, inside its server
  // Its place on each of the edge-disjoint cycles through its server's members over direct
  // NVLinks (a partial mesh such as DGX-1's hybrid cube mesh, where NCCL's rings follow NVLink
  // and spread over several such cycles, each in both directions); empty when the server has
  // no such cycle or every member pair is linked anyway. Every member of a server has as many.
  std::vector<int> nvlink_cycle_positions;
  // Servers with a PCIe tree: the member's PCIe switch and CPU socket inside its server (-1
  // without one), and the GPUs of its server it reaches over a direct NVLink (their locals).
  int pcie_switch = -1;
  int socket = -1;
  std::vector<int> nvlink_locals;
};

// What carries the hops between two GPUs of a server; selects NCCL's per-hop latency figures
// (NVLink or PCI) in sim/collectives/protocol.h.
enum class IntraFabric { kNvSwitch, kNvLink, kPcie };

struct GroupView {
  std::vector<GroupMember> members;  // in Collective::ranks order
  // Bandwidth per direction and latency of one hop between two GPUs of a server (the slowest
  // such hop among the group's servers: NVSwitch port, direct NVLink or PCIe path), and of one
  // hop between servers (NIC, switches). Used by the tuner's alpha-beta predictions only; the
  // simulation itself uses the platform's real routes.
  double intra_Bps = 0;
  double intra_latency_s = 0;
  IntraFabric intra_fabric = IntraFabric::kNvSwitch;  // of the slowest intra-server hop
  double inter_Bps = 0;                               // per NIC
  // What each member gets of its server's NICs when every member of the server sends across
  // at once (NICs used x their bandwidth / members there), on the worst-served server.
  double nic_share_per_member_Bps = 0;
  double inter_latency_s = 0;
  // The hop between neighbours of a ring (ServerBlocks order): an NVLink when every server of
  // two or more members has an NVLink cycle through them, else the intra-server hop above.
  double ring_intra_Bps = 0;
  double ring_intra_latency_s = 0;
  IntraFabric ring_intra_fabric = IntraFabric::kNvSwitch;
  // Edge-disjoint NVLink cycles of the server with fewest, when every server of two or more
  // members has some (ring_intra_* is then one NVLink), else 0. Channels spread over them.
  int nvlink_cycles = 0;
  // PCIe trees (the slowest among the members' servers): a switch's uplink to its socket and
  // the link between sockets, per direction; 0 when no member's server has a PCIe tree.
  double pcie_uplink_Bps = 0;
  double socket_link_Bps = 0;
  int num_servers = 0;          // distinct servers among the members
  int max_nics_per_server = 1;  // distinct NICs used by the members of one server (max)
  // NIC k of every server sits on leaf (rail) k (NetworkKind::kRailOptimized): a hop between
  // NICs of different indices crosses the spine.
  bool rail_optimized = false;
  // Per-hop latencies `calibrate --fabric` measured, by protocol name (ServerGroup::
  // measured_*_step_s): intra when every server holding two or more members (or, when none
  // does, every member's server) has one, the largest; inter when every member's server has
  // one, the largest. Where present, one step over such a hop costs this in place of the route
  // latency plus NCCL's documented step latency (sim/collectives/protocol.h).
  std::map<std::string, double> measured_intra_step_s;
  std::map<std::string, double> measured_inter_step_s;
  bool any_shared_server = false;  // some server holds two or more members
};

// Builds the view of `ranks` (global ranks) in `cluster`.
GroupView MakeGroupView(const ClusterSpec& cluster, const std::vector<int>& ranks);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_GROUP_VIEW_H_
