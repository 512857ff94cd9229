#include "sim/platform.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "core/error.h"

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;

namespace stratasim::sim {
namespace {

// A connection: `up` carries traffic away from the endpoint it belongs to (GPU to switch, leaf
// to spine), `down` towards it. Full duplex: two links; half duplex: one link, both directions
// sharing its bandwidth.
struct Duplex {
  sg4::Link* up = nullptr;
  sg4::Link* down = nullptr;
};

sg4::Link* MakeLink(sg4::NetZone* zone, const std::string& name, double bandwidth_Bps,
                    double latency_s) {
  return zone->create_link(name, bandwidth_Bps)->set_latency(latency_s)->seal();
}

Duplex MakeDuplex(sg4::NetZone* zone, const std::string& name, const LinkSpec& spec,
                  double up_latency_s = -1) {
  if (!spec.full_duplex) {
    sg4::Link* both = MakeLink(zone, name + "_half", spec.bandwidth_Bps, spec.latency_s);
    return Duplex{both, both};
  }
  return Duplex{MakeLink(zone, name + "_up", spec.bandwidth_Bps,
                         up_latency_s >= 0 ? up_latency_s : spec.latency_s),
                MakeLink(zone, name + "_down", spec.bandwidth_Bps, spec.latency_s)};
}

using Route = std::vector<sg4::Link*>;

void AddRoute(sg4::NetZone* zone, NetPoint* src, NetPoint* dst, NetPoint* gw_src, NetPoint* gw_dst,
              const Route& links) {
  std::vector<sg4::LinkInRoute> in_route;
  in_route.reserve(links.size());
  for (sg4::Link* l : links) in_route.emplace_back(l);
  zone->add_route(src, dst, gw_src, gw_dst, in_route, /*symmetrical=*/false);
}

void Append(Route& r, const Route& more) { r.insert(r.end(), more.begin(), more.end()); }

// The links of one server's fabric and the routes through them. Hosts and zones are made by
// BuildPlatform; this class only knows links and which of them a route crosses.
class ServerFabric {
 public:
  ServerFabric(const ServerGroup& group, int server_index)
      : g_(group), prefix_("s" + std::to_string(server_index)) {}

  int Sockets() const { return g_.pcie ? g_.pcie->sockets : 1; }
  int NicOf(int local) const { return local / (g_.gpus_per_server / g_.nics.count); }
  int SocketOf(int local) const { return g_.pcie ? SocketOfSwitch(SwitchOf(local)) : 0; }
  const std::string& prefix() const { return prefix_; }

  // `entry_latency_s`: latency of the first network switch, charged on the NIC's outgoing link
  // rather than on a link of the switch's own, which every flow through the switch would share
  // and so tie all of them into one max-min system (SimGrid solves each connected component
  // of flows and links on every event: a shared latency-only link makes that the whole run).
  void CreateLinks(sg4::NetZone* zone, double entry_latency_s) {
    const int n = g_.gpus_per_server;
    if (g_.nvswitch) {
      for (int j = 0; j < n; ++j) {
        nvswitch_.push_back(
            MakeDuplex(zone, prefix_ + "g" + std::to_string(j) + "_nvs", g_.nvswitch->link));
      }
    }
    if (g_.nvlink) {
      for (const auto& [a, b] : g_.nvlink->pairs) {
        Duplex d = MakeDuplex(zone, prefix_ + "nvl" + std::to_string(a) + "_" + std::to_string(b),
                              g_.nvlink->link);
        nvlink_[{a, b}] = d.up;    // a -> b
        nvlink_[{b, a}] = d.down;  // b -> a
      }
    }
    if (g_.pcie) {
      const PcieSpec& p = *g_.pcie;
      for (int j = 0; j < n; ++j) {
        gpu_pcie_.push_back(MakeDuplex(zone, prefix_ + "g" + std::to_string(j) + "_pcie", p.link));
      }
      for (int sw = 0; sw < n / p.gpus_per_switch; ++sw) {
        switch_uplink_.push_back(
            MakeDuplex(zone, prefix_ + "psw" + std::to_string(sw) + "_uplink", p.uplink));
      }
      socket_link_.assign(p.sockets, std::vector<sg4::Link*>(p.sockets, nullptr));
      for (int a = 0; a < p.sockets; ++a) {
        for (int b = 0; b < p.sockets; ++b) {
          if (a == b) continue;
          if (!p.socket_link.full_duplex && b < a) {
            socket_link_[a][b] = socket_link_[b][a];  // one link for both directions
            continue;
          }
          socket_link_[a][b] =
              MakeLink(zone, prefix_ + "socket" + std::to_string(a) + "to" + std::to_string(b),
                       p.socket_link.bandwidth_Bps, p.socket_link.latency_s);
        }
      }
    } else {
      for (int j = 0; j < n; ++j) {
        host_link_.push_back(MakeDuplex(zone, prefix_ + "g" + std::to_string(j) + "_host",
                                        LinkSpec{kDefaultHostLinkBps, kDefaultHostLinkLatencyS}));
      }
    }
    for (int k = 0; k < g_.nics.count; ++k) {
      // A half-duplex NIC is one link that every route crosses twice (out of one NIC, into
      // another): half the switch latency on each keeps a route's total.
      LinkSpec link = g_.nics.link;
      if (!link.full_duplex) link.latency_s += entry_latency_s / 2;
      if (!nic_factor_.empty()) link.bandwidth_Bps /= nic_factor_[k];
      nic_.push_back(MakeDuplex(zone, prefix_ + "nic" + std::to_string(k), link,
                                g_.nics.link.latency_s + entry_latency_s));
    }
  }

  // Link stragglers (core/stragglers.h): NIC k runs at bandwidth / the largest link factor of
  // the GPUs it serves (ranks first_rank..), both directions; a NIC shared by several GPUs
  // slows all of them. Fixed factors only (the loader refuses per-iteration ones at link level).
  void SetNicFactors(const Stragglers& stragglers, int first_rank) {
    if (stragglers.empty()) return;
    if (stragglers.HasPerIterationLinkFactor()) {
      throw Error(
          "link and server stragglers take fixed factors only (set when the platform is "
          "built)");
    }
    const int per_nic = g_.gpus_per_server / g_.nics.count;
    nic_factor_.assign(g_.nics.count, 1.0);
    for (int j = 0; j < g_.gpus_per_server; ++j) {
      double& f = nic_factor_[j / per_nic];
      f = std::max(f, stragglers.SlowdownFactor(first_rank + j, 0, StragglerLevel::kLink));
    }
  }

  Route GpuToGpu(int a, int b) const {
    if (g_.nvswitch) return {nvswitch_[a].up, nvswitch_[b].down};
    auto direct = nvlink_.find({a, b});
    if (direct != nvlink_.end()) return {direct->second};
    if (!g_.pcie) {
      throw Error("server group '" + g_.name + "': GPUs " + std::to_string(a) + " and " +
                  std::to_string(b) + " have no NVLink between them and no PCIe tree is given");
    }
    Route r{gpu_pcie_[a].up};
    Append(r, SwitchToSwitch(SwitchOf(a), SwitchOf(b)));
    r.push_back(gpu_pcie_[b].down);
    return r;
  }

  Route GpuToNetwork(int a) const {
    const int nic = NicOf(a);
    if (!g_.pcie) return {nic_[nic].up};
    Route r{gpu_pcie_[a].up};
    Append(r, SwitchToSwitch(SwitchOf(a), NicSwitch(nic)));
    r.push_back(nic_[nic].up);
    return r;
  }

  Route NetworkToGpu(int a) const {
    const int nic = NicOf(a);
    if (!g_.pcie) return {nic_[nic].down};
    Route r{nic_[nic].down};
    Append(r, SwitchToSwitch(NicSwitch(nic), SwitchOf(a)));
    r.push_back(gpu_pcie_[a].down);
    return r;
  }

  Route CpuToGpu(int socket, int a) const {
    if (!g_.pcie) return {host_link_[a].down};
    Route r;
    if (socket != SocketOf(a)) r.push_back(socket_link_[socket][SocketOf(a)]);
    r.push_back(switch_uplink_[SwitchOf(a)].down);
    r.push_back(gpu_pcie_[a].down);
    return r;
  }

  // The NIC through which CPU socket `socket` reaches the network: the first one under its PCIe
  // tree, else NIC 0.
  int NicOfSocket(int socket) const {
    if (!g_.pcie) return 0;
    for (int k = 0; k < g_.nics.count; ++k) {
      if (SocketOfSwitch(NicSwitch(k)) == socket) return k;
    }
    return 0;
  }

  Route CpuToNetwork(int socket) const {
    const int nic = NicOfSocket(socket);
    if (!g_.pcie) return {nic_[nic].up};
    const int sw = NicSwitch(nic);
    Route r;
    if (SocketOfSwitch(sw) != socket) r.push_back(socket_link_[socket][SocketOfSwitch(sw)]);
    r.push_back(switch_uplink_[sw].down);
    r.push_back(nic_[nic].up);
    return r;
  }

  Route NetworkToCpu(int socket) const {
    const int nic = NicOfSocket(socket);
    if (!g_.pcie) return {nic_[nic].down};
    const int sw = NicSwitch(nic);
    Route r{nic_[nic].down, switch_uplink_[sw].up};
    if (SocketOfSwitch(sw) != socket) r.push_back(socket_link_[SocketOfSwitch(sw)][socket]);
    return r;
  }

  Route GpuToCpu(int a, int socket) const {
    if (!g_.pcie) return {host_link_[a].up};
    Route r{gpu_pcie_[a].up, switch_uplink_[SwitchOf(a)].up};
    if (socket != SocketOf(a)) r.push_back(socket_link_[SocketOf(a)][socket]);
    return r;
  }

 private:
  int SwitchOf(int local) const { return local / g_.pcie->gpus_per_switch; }
  int SocketOfSwitch(int sw) const {
    const int switches = g_.gpus_per_server / g_.pcie->gpus_per_switch;
    return sw / (switches / g_.pcie->sockets);
  }
  int NicSwitch(int nic) const { return SwitchOf(nic * (g_.gpus_per_server / g_.nics.count)); }

  // PCIe path between two switches: up to the CPU, across sockets if needed, down again.
  Route SwitchToSwitch(int from, int to) const {
    if (from == to) return {};
    Route r{switch_uplink_[from].up};
    const int sa = SocketOfSwitch(from), sb = SocketOfSwitch(to);
    if (sa != sb) r.push_back(socket_link_[sa][sb]);
    r.push_back(switch_uplink_[to].down);
    return r;
  }

  const ServerGroup& g_;
  std::string prefix_;
  std::vector<Duplex> nvswitch_, gpu_pcie_, switch_uplink_, host_link_, nic_;
  std::vector<double> nic_factor_;  // by NIC; empty without stragglers
  std::map<std::pair<int, int>, sg4::Link*> nvlink_;
  std::vector<std::vector<sg4::Link*>> socket_link_;
};

// A zone holding one endpoint (a GPU or a CPU socket) and a router as its gateway. Giving every
// endpoint its own zone lets routes inside a server be bypass routes between endpoint zones,
// while the network routes come from star zones in O(1) per endpoint: no N^2 route table at
// any level. The zone is a star zone with no routes declared, so host <-> gateway is an empty
// route (a star zone gives unset routes no links) and a flow's route holds only real links.
// A link there, even a non-limiting FATPIPE one, would be a max-min constraint shared by every
// flow in and out of the GPU, chaining all flows of a ring or tree into one connected
// component that SimGrid re-solves on each event: O(F) work per event, O(F^2) per collective
// (what made 128-GPU step-fidelity rings take minutes).
struct Endpoint {
  sg4::NetZone* zone = nullptr;
  sg4::Host* host = nullptr;
  NetPoint* gateway = nullptr;
  sg4::NetZone* parent = nullptr;
};

Endpoint MakeEndpoint(sg4::NetZone* parent, const std::string& name, double speed) {
  Endpoint e;
  e.parent = parent;
  e.zone = sg4::create_star_zone(name + "_zone");
  e.zone->set_parent(parent);
  e.host = e.zone->create_host(name, speed);
  e.gateway = e.zone->create_router(name + "_gw");
  e.zone->seal();
  return e;
}

// Star-zone routes of a child (zone with gateway) to and from the zone's centre.
void AddStarRoutes(sg4::NetZone* star, sg4::NetZone* child, NetPoint* gateway, const Route& up,
                   const Route& down) {
  AddRoute(star, child->get_netpoint(), nullptr, gateway, nullptr, up);
  AddRoute(star, nullptr, child->get_netpoint(), nullptr, gateway, down);
}

// A route between two endpoints that the star hierarchy does not give (inside a server),
// declared at their common ancestor zone.
void AddBypassRoute(sg4::NetZone* at, NetPoint* src, NetPoint* dst, NetPoint* gw_src,
                    NetPoint* gw_dst, const Route& links) {
  std::vector<sg4::LinkInRoute> in_route;
  for (sg4::Link* l : links) in_route.emplace_back(l);
  at->add_bypass_route(src, dst, gw_src, gw_dst, in_route);
}

void AddBypass(sg4::NetZone* root, const Endpoint& a, const Endpoint& b, const Route& links) {
  AddBypassRoute(a.parent == b.parent ? a.parent : root, a.zone->get_netpoint(),
                 b.zone->get_netpoint(), a.gateway, b.gateway, links);
}

void CheckCluster(const ClusterSpec& c) {
  if (c.groups.empty()) throw Error("the cluster has no servers");
  for (const ServerGroup& g : c.groups) {
    const std::string where = "server group '" + g.name + "': ";
    if (g.count < 1 || g.gpus_per_server < 1) throw Error(where + "needs at least one GPU");
    if (g.nics.count < 1 || g.gpus_per_server % g.nics.count != 0) {
      throw Error(where + "NIC count must divide the GPUs per server");
    }
    if (g.pcie) {
      const PcieSpec& p = *g.pcie;
      if (p.gpus_per_switch < 1 || g.gpus_per_server % p.gpus_per_switch != 0 || p.sockets < 1 ||
          (g.gpus_per_server / p.gpus_per_switch) % p.sockets != 0) {
        throw Error(where + "PCIe switches must divide the GPUs and the sockets the switches");
      }
    }
    if (g.nvlink) {
      for (const auto& [a, b] : g.nvlink->pairs) {
        if (a < 0 || b < 0 || a >= g.gpus_per_server || b >= g.gpus_per_server || a == b) {
          throw Error(where + "NVLink pair (" + std::to_string(a) + ", " + std::to_string(b) +
                      ") is not a pair of distinct GPUs of the server");
        }
      }
    }
  }
  if (c.network.kind == NetworkKind::kLeafSpine &&
      (c.network.servers_per_leaf < 1 || c.network.oversubscription < 1)) {
    throw Error("leaf-spine network needs servers_per_leaf >= 1 and oversubscription >= 1");
  }
}

double GpuSpeed(const GpuSpec& gpu) {
  return gpu.Supports(DType::kFP16) ? gpu.Peak(DType::kFP16) : gpu.Peak(DType::kFP32);
}

// The zones GPU endpoints hang from, each with one aggregated uplink to the spine (the root
// star's centre): a leaf of a leaf-spine network, a rail's leaf of a rail-optimized one, or,
// when a leaf-spine network is not oversubscribed, one rail of one leaf.
//
// Why split by rail there: a leaf's uplink of (its NICs' bandwidth) / 1 can never be the
// bottleneck, since what crosses it already crossed those NICs; the constraint is redundant
// and the max-min shares are the same without it. But as one link it joins every flow that
// leaves the leaf into one max-min component, which SimGrid re-solves on every event. Split
// by rail, the uplinks are just as redundant, keep the same latencies (so CM02's
// latency-weighted shares are unchanged too), and only flows of one rail share one.
// Oversubscribed leaves keep one shared uplink: there it is a real bottleneck.
class UplinkGroups {
 public:
  explicit UplinkGroups(const NetworkSpec& net, sg4::NetZone* root)
      : net_(net),
        root_(root),
        by_rail_(net.kind == NetworkKind::kLeafSpine && net.oversubscription == 1) {}

  bool by_rail() const { return by_rail_; }

  // The group of NIC `nic` of server `server`, created on first use; -1 on a single switch.
  int Of(int server, int nic) {
    if (net_.kind == NetworkKind::kSingleSwitch) return -1;
    const int leaf = net_.kind == NetworkKind::kLeafSpine ? server / net_.servers_per_leaf : nic;
    const std::pair<int, int> key{leaf, by_rail_ ? nic : -1};
    auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    Group g;
    g.leaf = leaf;
    g.name = "leaf" + std::to_string(leaf) + (by_rail_ ? "_rail" + std::to_string(nic) : "");
    g.zone = sg4::create_star_zone(g.name);
    g.zone->set_parent(root_);
    // The gateway router sits in a zone of its own: SimGrid 3.32 resolves a route from a host
    // of a child zone to a router placed directly in a star zone with the host's id in its
    // own zone, i.e. through the wrong star branch.
    sg4::NetZone* gateway_zone = sg4::create_full_zone(g.name + "_gw_zone");
    gateway_zone->set_parent(g.zone);
    g.gateway = gateway_zone->create_router(g.name + "_gw");
    gateway_zone->seal();
    AddStarRoutes(g.zone, gateway_zone, g.gateway, {}, {});
    groups_.push_back(g);
    return index_[key] = static_cast<int>(groups_.size()) - 1;
  }

  sg4::NetZone* Zone(int group) const { return group < 0 ? root_ : groups_[group].zone; }
  NetPoint* Gateway(int group) const { return groups_[group].gateway; }
  int Leaf(int group) const { return groups_[group].leaf; }
  int Count() const { return static_cast<int>(groups_.size()); }
  void AddNic(int group, double bandwidth_Bps) {
    if (group >= 0) groups_[group].nic_Bps += bandwidth_Bps;
  }

  // Each group's uplink: its NICs' bandwidth divided by the oversubscription, the spine's
  // latency going up and the destination leaf's coming down.
  void Connect() {
    for (Group& g : groups_) {
      Duplex uplink =
          MakeDuplex(root_, g.name + "_uplink",
                     LinkSpec{g.nic_Bps / net_.oversubscription, net_.switch_latency_s});
      g.zone->seal();
      AddStarRoutes(root_, g.zone, g.gateway, {uplink.up}, {uplink.down});
    }
  }

 private:
  struct Group {
    sg4::NetZone* zone = nullptr;
    NetPoint* gateway = nullptr;
    int leaf = 0;
    double nic_Bps = 0;
    std::string name;
  };
  const NetworkSpec& net_;
  sg4::NetZone* root_;
  bool by_rail_;
  std::map<std::pair<int, int>, int> index_;
  std::vector<Group> groups_;
};

}  // namespace

Platform BuildPlatform(const ClusterSpec& cluster) {
  CheckCluster(cluster);
  const NetworkSpec& net = cluster.network;
  sg4::NetZone* root = sg4::create_star_zone("network");

  // Leaves (leaf-spine: by server; rail-optimized: by NIC index), or rails of leaves, are star
  // zones under the root star, whose centre stands for the spine; a single switch is the root.
  UplinkGroups groups(net, root);
  struct RailEndpoint {  // a GPU under a rail of a leaf, for the bypasses between rails
    Endpoint e;
    int group;
    Route up, down;
  };
  std::vector<RailEndpoint> rail_endpoints;

  Platform p;
  int server = 0;
  for (int gi = 0; gi < static_cast<int>(cluster.groups.size()); ++gi) {
    const ServerGroup& g = cluster.groups[gi];
    const double speed = GpuSpeed(cluster.GpuOfGroup(gi));
    for (int k = 0; k < g.count; ++k, ++server) {
      ServerFabric fabric(g, server);
      fabric.SetNicFactors(cluster.stragglers, static_cast<int>(p.gpus.size()));
      fabric.CreateLinks(root, net.switch_latency_s);
      std::vector<Endpoint> gpus, cpus;
      for (int nic = 0; nic < g.nics.count; ++nic) {
        groups.AddNic(groups.Of(server, nic), g.nics.link.bandwidth_Bps);
      }
      for (int j = 0; j < g.gpus_per_server; ++j) {
        const int group = groups.Of(server, fabric.NicOf(j));
        sg4::NetZone* parent = groups.Zone(group);
        Endpoint e = MakeEndpoint(parent, fabric.prefix() + "g" + std::to_string(j), speed);
        AddStarRoutes(parent, e.zone, e.gateway, fabric.GpuToNetwork(j), fabric.NetworkToGpu(j));
        if (groups.by_rail()) {
          rail_endpoints.push_back({e, group, fabric.GpuToNetwork(j), fabric.NetworkToGpu(j)});
        }
        gpus.push_back(e);
      }
      for (int s = 0; s < fabric.Sockets(); ++s) {
        // CPU hosts source and sink host<->device copies and run host tasks (Task::on_host),
        // whose durations the executor gives in this unit of speed. A socket hangs under the
        // group of the NIC it reaches the network through.
        const int group = groups.Of(server, fabric.NicOfSocket(s));
        sg4::NetZone* parent = groups.Zone(group);
        Endpoint e = MakeEndpoint(parent, fabric.prefix() + "cpu" + std::to_string(s), 1e9);
        AddStarRoutes(parent, e.zone, e.gateway, fabric.CpuToNetwork(s), fabric.NetworkToCpu(s));
        if (groups.by_rail()) {
          rail_endpoints.push_back({e, group, fabric.CpuToNetwork(s), fabric.NetworkToCpu(s)});
        }
        cpus.push_back(e);
      }
      for (int a = 0; a < g.gpus_per_server; ++a) {
        for (int b = 0; b < g.gpus_per_server; ++b) {
          if (a != b) AddBypass(root, gpus[a], gpus[b], fabric.GpuToGpu(a, b));
        }
        for (int s = 0; s < fabric.Sockets(); ++s) {
          AddBypass(root, cpus[s], gpus[a], fabric.CpuToGpu(s, a));
          AddBypass(root, gpus[a], cpus[s], fabric.GpuToCpu(a, s));
        }
        p.gpus.push_back(gpus[a].host);
        p.host_cpus.push_back(cpus[fabric.SocketOf(a)].host);
        p.gpu_speed.push_back(speed);
      }
    }
  }

  // Between two rails of one leaf, traffic crosses the leaf switch only: a bypass from each
  // GPU's endpoint zone to every other rail zone of its leaf and back, holding the GPU's own
  // path to or from its NIC (the other end's path comes from that rail's star routes).
  for (const RailEndpoint& r : rail_endpoints) {
    for (int other = 0; other < groups.Count(); ++other) {
      if (other == r.group || groups.Leaf(other) != groups.Leaf(r.group)) continue;
      NetPoint* zone = groups.Zone(other)->get_netpoint();
      AddBypassRoute(root, r.e.zone->get_netpoint(), zone, r.e.gateway, groups.Gateway(other),
                     r.up);
      AddBypassRoute(root, zone, r.e.zone->get_netpoint(), groups.Gateway(other), r.e.gateway,
                     r.down);
    }
  }
  groups.Connect();
  root->seal();
  for (sg4::Link* l : sg4::Engine::get_instance()->get_all_links()) {
    p.link_latency_s[l] = l->get_latency();
    l->set_latency(0);
  }
  return p;
}

double RouteLatencySeconds(const Platform& p, sg4::Host* src, sg4::Host* dst) {
  std::vector<sg4::Link*> links;
  double ignored = 0;
  src->route_to(dst, links, &ignored);
  double latency = 0;
  for (const sg4::Link* l : links) {
    auto it = p.link_latency_s.find(l);
    if (it != p.link_latency_s.end()) latency += it->second;
  }
  return latency;
}

}  // namespace stratasim::sim
