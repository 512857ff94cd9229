#include "sim/collectives/group_view.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "core/error.h"

namespace stratasim::sim {
namespace {

struct Hop {
  double bandwidth_Bps = std::numeric_limits<double>::infinity();
  double latency_s = 0;
  IntraFabric fabric = IntraFabric::kNvSwitch;
};

// The PCIe path between two GPUs of a server, as sim/platform.cpp routes it: up the GPU's link,
// through the switch uplinks and across the CPU sockets when the GPUs sit under different
// switches or sockets, down the other GPU's link. Bandwidth is the path's minimum, latency its
// sum.
Hop PcieHop(const PcieSpec& p, int gpus_per_server, int a, int b) {
  Hop h{p.link.bandwidth_Bps, 2 * p.link.latency_s, IntraFabric::kPcie};
  const int switch_a = a / p.gpus_per_switch, switch_b = b / p.gpus_per_switch;
  if (switch_a == switch_b) return h;
  h.bandwidth_Bps = std::min(h.bandwidth_Bps, p.uplink.bandwidth_Bps);
  h.latency_s += 2 * p.uplink.latency_s;
  const int switches_per_socket = std::max(1, gpus_per_server / p.gpus_per_switch / p.sockets);
  if (switch_a / switches_per_socket != switch_b / switches_per_socket) {
    h.bandwidth_Bps = std::min(h.bandwidth_Bps, p.socket_link.bandwidth_Bps);
    h.latency_s += p.socket_link.latency_s;
  }
  return h;
}

bool DirectlyLinked(const NvLinkSpec& nv, int a, int b) {
  return std::any_of(nv.pairs.begin(), nv.pairs.end(), [&](const std::pair<int, int>& p) {
    return (p.first == a && p.second == b) || (p.first == b && p.second == a);
  });
}

// The slowest hop between two of `locals` (GPU indices inside one server of `g`). Routes follow
// the platform's preference: NVSwitch, else a direct NVLink when every member pair has one, else
// the PCIe tree.
Hop IntraServerHop(const ServerGroup& g, const std::vector<int>& locals) {
  if (g.nvswitch) {
    // Up the source GPU's port and down the destination's: two link latencies.
    return Hop{g.nvswitch->link.bandwidth_Bps, 2 * g.nvswitch->link.latency_s,
               IntraFabric::kNvSwitch};
  }
  bool all_nvlink = g.nvlink.has_value();
  for (size_t i = 0; all_nvlink && i < locals.size(); ++i) {
    for (size_t j = i + 1; all_nvlink && j < locals.size(); ++j) {
      all_nvlink = DirectlyLinked(*g.nvlink, locals[i], locals[j]);
    }
  }
  if (all_nvlink) {
    return Hop{g.nvlink->link.bandwidth_Bps, g.nvlink->link.latency_s, IntraFabric::kNvLink};
  }
  if (!g.pcie && locals.size() < 2) {
    // A lone member on a server without a PCIe tree (one-GPU cloud instances): its traffic goes
    // straight to the NIC, and no intra-server hop exists to be slow.
    return Hop{std::numeric_limits<double>::infinity(), 0, IntraFabric::kNvSwitch};
  }
  if (!g.pcie) {
    throw Error("server group '" + g.name +
                "': members of a collective have neither NVSwitch, NVLink between every pair, "
                "nor a PCIe tree");
  }
  Hop slowest{std::numeric_limits<double>::infinity(), 0, IntraFabric::kPcie};
  for (size_t i = 0; i < locals.size(); ++i) {
    for (size_t j = i + 1; j < locals.size(); ++j) {
      const Hop h = PcieHop(*g.pcie, g.gpus_per_server, locals[i], locals[j]);
      slowest.bandwidth_Bps = std::min(slowest.bandwidth_Bps, h.bandwidth_Bps);
      slowest.latency_s = std::max(slowest.latency_s, h.latency_s);
    }
  }
  if (locals.size() < 2) {  // a lone member: the hop it would take to its neighbour
    slowest = PcieHop(*g.pcie, g.gpus_per_server, 0, g.gpus_per_server - 1);
  }
  return slowest;
}

// A cycle through every GPU of `locals` over the NVLinks `linked` (by position into `locals`),
// as positions into `locals`, found by depth-first search from the first, trying lower locals
// first (deterministic); empty when there is none. Small servers only: the search is
// exponential in the worst case.
std::vector<int> HamiltonianCycle(const std::vector<int>& locals,
                                  const std::vector<std::vector<char>>& linked) {
  const int n = static_cast<int>(locals.size());
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) { return locals[a] < locals[b]; });
  std::vector<int> path{order[0]};
  std::vector<char> used(n, 0);
  used[order[0]] = 1;
  std::function<bool()> extend = [&]() {
    if (static_cast<int>(path.size()) == n) return linked[path.back()][path.front()] != 0;
    for (int next : order) {
      if (used[next] || !linked[path.back()][next]) continue;
      used[next] = 1;
      path.push_back(next);
      if (extend()) return true;
      path.pop_back();
      used[next] = 0;
    }
    return false;
  };
  return extend() ? path : std::vector<int>{};
}

// Edge-disjoint cycles through every GPU of `locals` over direct NVLinks, as positions into
// `locals`: the first cycle found, then the first among the links it left unused, and so on
// (greedy; on DGX-1's cube mesh, where each GPU has 4 NVLinks, it finds 2, as NCCL's ring
// search does on a DGX-1 with P100: 4 rings, each cycle in both directions).
std::vector<std::vector<int>> NvLinkCycles(const NvLinkSpec& nv, const std::vector<int>& locals) {
  const int n = static_cast<int>(locals.size());
  if (n < 3 || n > 16) return {};
  std::vector<std::vector<char>> linked(n, std::vector<char>(n, 0));
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) linked[a][b] = a != b && DirectlyLinked(nv, locals[a], locals[b]);
  }
  std::vector<std::vector<int>> cycles;
  for (std::vector<int> c = HamiltonianCycle(locals, linked); !c.empty();
       c = HamiltonianCycle(locals, linked)) {
    for (int i = 0; i < n; ++i) {
      const int a = c[i], b = c[(i + 1) % n];
      linked[a][b] = linked[b][a] = 0;
    }
    cycles.push_back(std::move(c));
  }
  return cycles;
}

}  // namespace

GroupView MakeGroupView(const ClusterSpec& cluster, const std::vector<int>& ranks) {
  GroupView view;
  std::map<int, std::vector<int>> locals_of_server;  // server -> member locals
  std::map<int, int> group_of_server;
  std::map<int, std::set<int>> nics_of_server;
  for (int rank : ranks) {
    const GpuLocation where = cluster.Locate(rank);
    const ServerGroup& g = cluster.groups[where.group];
    if (g.nics.count < 1 || g.gpus_per_server % g.nics.count != 0) {
      throw Error("server group '" + g.name + "': " + std::to_string(g.nics.count) +
                  " NICs do not divide its " + std::to_string(g.gpus_per_server) + " GPUs");
    }
    GroupMember m;
    m.rank = rank;
    m.server = where.server;
    m.local = where.local;
    m.nic = where.local / (g.gpus_per_server / g.nics.count);
    if (g.pcie && !g.nvswitch) {  // as PcieHop routes it
      const PcieSpec& p = *g.pcie;
      const int switches_per_socket =
          std::max(1, g.gpus_per_server / p.gpus_per_switch / p.sockets);
      m.pcie_switch = where.local / p.gpus_per_switch;
      m.socket = m.pcie_switch / switches_per_socket;
      const double uplink = p.uplink.bandwidth_Bps, socket = p.socket_link.bandwidth_Bps;
      view.pcie_uplink_Bps =
          view.pcie_uplink_Bps > 0 ? std::min(view.pcie_uplink_Bps, uplink) : uplink;
      view.socket_link_Bps =
          view.socket_link_Bps > 0 ? std::min(view.socket_link_Bps, socket) : socket;
    }
    if (g.nvlink && !g.nvswitch) {
      for (const auto& [a, b] : g.nvlink->pairs) {
        if (a == where.local) m.nvlink_locals.push_back(b);
        if (b == where.local) m.nvlink_locals.push_back(a);
      }
    }
    view.members.push_back(m);
    locals_of_server[m.server].push_back(m.local);
    group_of_server[m.server] = where.group;
    nics_of_server[m.server].insert(m.nic);
  }
  view.num_servers = static_cast<int>(locals_of_server.size());
  view.rail_optimized = cluster.network.kind == NetworkKind::kRailOptimized;
  view.max_nics_per_server = 1;
  for (const auto& [server, nics] : nics_of_server) {
    view.max_nics_per_server = std::max(view.max_nics_per_server, static_cast<int>(nics.size()));
  }

  // Intra-server hop: the slowest among servers holding two or more members (or, when every
  // server holds one, the hop such a server would offer, so the view is never empty).
  bool any_shared = false;
  for (const auto& [server, locals] : locals_of_server) any_shared |= locals.size() >= 2;
  Hop intra{std::numeric_limits<double>::infinity(), 0, IntraFabric::kNvSwitch};
  for (const auto& [server, locals] : locals_of_server) {
    if (any_shared && locals.size() < 2) continue;
    const Hop h = IntraServerHop(cluster.groups[group_of_server[server]], locals);
    if (h.bandwidth_Bps < intra.bandwidth_Bps) intra.fabric = h.fabric;
    intra.bandwidth_Bps = std::min(intra.bandwidth_Bps, h.bandwidth_Bps);
    intra.latency_s = std::max(intra.latency_s, h.latency_s);
  }
  if (!locals_of_server.empty()) {
    view.intra_Bps = intra.bandwidth_Bps;
    view.intra_latency_s = intra.latency_s;
    view.intra_fabric = intra.fabric;
  }

  // Rings through a partial NVLink mesh follow its links, as NCCL's ring search does: give the
  // members of each such server their places on its NVLink cycles (ServerBlocks orders by the
  // first, ChannelRing spreads channels over all).
  bool every_ring_nvlink = any_shared;
  double ring_Bps = std::numeric_limits<double>::infinity(), ring_latency_s = 0;
  int cycles_min = std::numeric_limits<int>::max();
  for (const auto& [server, locals] : locals_of_server) {
    if (locals.size() < 2) continue;
    const ServerGroup& g = cluster.groups[group_of_server[server]];
    const bool partial =
        !g.nvswitch && g.nvlink && IntraServerHop(g, locals).fabric != IntraFabric::kNvLink;
    const std::vector<std::vector<int>> cycles =
        partial ? NvLinkCycles(*g.nvlink, locals) : std::vector<std::vector<int>>{};
    if (cycles.empty()) {
      every_ring_nvlink = false;
      continue;
    }
    ring_Bps = std::min(ring_Bps, g.nvlink->link.bandwidth_Bps);
    ring_latency_s = std::max(ring_latency_s, g.nvlink->link.latency_s);
    cycles_min = std::min(cycles_min, static_cast<int>(cycles.size()));
    std::vector<int> members_here;  // member indices of this server, in member order
    for (int m = 0; m < static_cast<int>(view.members.size()); ++m) {
      if (view.members[m].server == server) members_here.push_back(m);
    }
    for (const std::vector<int>& cycle : cycles) {
      for (int pos = 0; pos < static_cast<int>(cycle.size()); ++pos) {
        view.members[members_here[cycle[pos]]].nvlink_cycle_positions.push_back(pos);
      }
    }
  }
  view.ring_intra_Bps = view.intra_Bps;
  view.ring_intra_latency_s = view.intra_latency_s;
  view.ring_intra_fabric = view.intra_fabric;
  if (every_ring_nvlink) {
    view.ring_intra_Bps = ring_Bps;
    view.ring_intra_latency_s = ring_latency_s;
    view.ring_intra_fabric = IntraFabric::kNvLink;
    view.nvlink_cycles = cycles_min;
  }

  // Inter-server hop: out of one NIC, through the switches, into another NIC. A leaf-spine or
  // rail-optimized path crosses leaf, spine and leaf (3 switches), counted so even when both
  // servers share a leaf: the tuner's estimate errs on the slow side.
  const double switches = cluster.network.kind == NetworkKind::kSingleSwitch ? 1.0 : 3.0;
  view.inter_Bps = std::numeric_limits<double>::infinity();
  double nic_latency_s = 0;
  for (const auto& [server, group] : group_of_server) {
    view.inter_Bps = std::min(view.inter_Bps, cluster.groups[group].nics.link.bandwidth_Bps);
    nic_latency_s = std::max(nic_latency_s, cluster.groups[group].nics.link.latency_s);
  }
  if (group_of_server.empty()) view.inter_Bps = 0;
  view.nic_share_per_member_Bps = group_of_server.empty() ? 0 : view.inter_Bps;
  for (const auto& [server, group] : group_of_server) {
    const double share = cluster.groups[group].nics.link.bandwidth_Bps *
                         static_cast<double>(nics_of_server[server].size()) /
                         static_cast<double>(locals_of_server[server].size());
    view.nic_share_per_member_Bps = std::min(view.nic_share_per_member_Bps, share);
  }
  view.inter_latency_s = 2 * nic_latency_s + switches * cluster.network.switch_latency_s;

  // Measured per-hop latencies (core/calibration.h, `fabric:`): a protocol counts only when
  // every server concerned has it, so that an uncalibrated server keeps the documented model.
  view.any_shared_server = any_shared;
  auto common = [&](bool intra) {
    std::map<std::string, double> out;
    bool first = true;
    for (const auto& [server, locals] : locals_of_server) {
      if (intra && any_shared && locals.size() < 2) continue;
      const ServerGroup& g = cluster.groups[group_of_server[server]];
      const std::map<std::string, double>& m =
          intra ? g.measured_intra_step_s : g.measured_inter_step_s;
      if (first) {
        out = m;
        first = false;
        continue;
      }
      for (auto it = out.begin(); it != out.end();) {
        auto found = m.find(it->first);
        if (found == m.end()) {
          it = out.erase(it);
        } else {
          it->second = std::max(it->second, found->second);
          ++it;
        }
      }
    }
    return out;
  };
  view.measured_intra_step_s = common(true);
  view.measured_inter_step_s = common(false);
  return view;
}

}  // namespace stratasim::sim
