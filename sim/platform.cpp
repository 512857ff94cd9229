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

// Bandwidth of the links that stand for a non-blocking switch: they add latency, never limit.
constexpr double kFatpipeBps = 1e15;

// A full-duplex connection: `up` carries traffic away from the endpoint it belongs to (GPU to
// switch, leaf to spine), `down` towards it.
struct Duplex {
  sg4::Link* up = nullptr;
  sg4::Link* down = nullptr;
};

sg4::Link* MakeLink(sg4::NetZone* zone, const std::string& name, double bandwidth_Bps,
                    double latency_s) {
  return zone->create_link(name, bandwidth_Bps)->set_latency(latency_s)->seal();
}

Duplex MakeDuplex(sg4::NetZone* zone, const std::string& name, const LinkSpec& spec) {
  return Duplex{MakeLink(zone, name + "_up", spec.bandwidth_Bps, spec.latency_s),
                MakeLink(zone, name + "_down", spec.bandwidth_Bps, spec.latency_s)};
}

sg4::Link* MakeFatpipe(sg4::NetZone* zone, const std::string& name, double latency_s) {
  return zone->create_link(name, kFatpipeBps)
      ->set_latency(latency_s)
      ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
      ->seal();
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

// One server: its zone, hosts and the links of its fabric, and the routes between them.
class ServerBuilder {
 public:
  ServerBuilder(const ServerGroup& group, int server_index, int first_rank, sg4::NetZone* parent)
      : g_(group), prefix_("s" + std::to_string(server_index)) {
    zone_ = sg4::create_full_zone(prefix_);
    zone_->set_parent(parent);
    (void)first_rank;
  }

  sg4::NetZone* zone() const { return zone_; }
  NetPoint* gateway() const { return gateway_; }
  const std::vector<sg4::Host*>& gpus() const { return gpus_; }
  sg4::Host* CpuOf(int local) const { return cpus_[SocketOf(local)]; }

  void Build(double gpu_speed) {
    const int n = g_.gpus_per_server;
    for (int j = 0; j < n; ++j) {
      gpus_.push_back(zone_->create_host(prefix_ + "g" + std::to_string(j), gpu_speed));
    }
    const int sockets = g_.pcie ? g_.pcie->sockets : 1;
    for (int s = 0; s < sockets; ++s) {
      // CPU hosts only source and sink host<->device copies; their speed is not used.
      cpus_.push_back(zone_->create_host(prefix_ + "cpu" + std::to_string(s), 1e9));
    }
    gateway_ = zone_->create_router(prefix_ + "gw");
    CreateLinks();
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        if (a != b) AddRoute(zone_, Np(gpus_[a]), Np(gpus_[b]), nullptr, nullptr, GpuToGpu(a, b));
      }
      AddRoute(zone_, Np(gpus_[a]), gateway_, nullptr, nullptr, GpuToNetwork(a));
      AddRoute(zone_, gateway_, Np(gpus_[a]), nullptr, nullptr, NetworkToGpu(a));
      for (int s = 0; s < sockets; ++s) {
        AddRoute(zone_, Np(cpus_[s]), Np(gpus_[a]), nullptr, nullptr, CpuToGpu(s, a));
        AddRoute(zone_, Np(gpus_[a]), Np(cpus_[s]), nullptr, nullptr, GpuToCpu(a, s));
      }
    }
    zone_->seal();
  }

 private:
  static NetPoint* Np(sg4::Host* h) { return h->get_netpoint(); }

  int GpusPerNic() const { return g_.gpus_per_server / g_.nics.count; }
  int SwitchOf(int local) const { return local / g_.pcie->gpus_per_switch; }
  int SocketOfSwitch(int sw) const {
    const int switches = g_.gpus_per_server / g_.pcie->gpus_per_switch;
    return sw / (switches / g_.pcie->sockets);
  }
  int SocketOf(int local) const { return g_.pcie ? SocketOfSwitch(SwitchOf(local)) : 0; }

  void CreateLinks() {
    const int n = g_.gpus_per_server;
    if (g_.nvswitch) {
      for (int j = 0; j < n; ++j) {
        nvswitch_.push_back(MakeDuplex(zone_, prefix_ + "g" + std::to_string(j) + "_nvs",
                                       g_.nvswitch->link));
      }
    }
    if (g_.nvlink) {
      for (const auto& [a, b] : g_.nvlink->pairs) {
        Duplex d = MakeDuplex(
            zone_, prefix_ + "nvl" + std::to_string(a) + "_" + std::to_string(b), g_.nvlink->link);
        nvlink_[{a, b}] = d.up;    // a -> b
        nvlink_[{b, a}] = d.down;  // b -> a
      }
    }
    if (g_.pcie) {
      const PcieSpec& p = *g_.pcie;
      for (int j = 0; j < n; ++j) {
        gpu_pcie_.push_back(MakeDuplex(zone_, prefix_ + "g" + std::to_string(j) + "_pcie", p.link));
      }
      for (int sw = 0; sw < n / p.gpus_per_switch; ++sw) {
        switch_uplink_.push_back(
            MakeDuplex(zone_, prefix_ + "psw" + std::to_string(sw) + "_uplink", p.uplink));
      }
      socket_link_.assign(p.sockets, std::vector<sg4::Link*>(p.sockets, nullptr));
      for (int a = 0; a < p.sockets; ++a) {
        for (int b = 0; b < p.sockets; ++b) {
          if (a == b) continue;
          socket_link_[a][b] = MakeLink(zone_, prefix_ + "socket" + std::to_string(a) + "to" +
                                                   std::to_string(b),
                                        p.socket_link.bandwidth_Bps, p.socket_link.latency_s);
        }
      }
    } else {
      for (int j = 0; j < n; ++j) {
        host_link_.push_back(MakeDuplex(zone_, prefix_ + "g" + std::to_string(j) + "_host",
                                        LinkSpec{kDefaultHostLinkBps, kDefaultHostLinkLatencyS}));
      }
    }
    for (int k = 0; k < g_.nics.count; ++k) {
      nic_.push_back(MakeDuplex(zone_, prefix_ + "nic" + std::to_string(k), g_.nics.link));
    }
  }

  // PCIe path between two switches: up to the CPU, across sockets if needed, down again.
  Route SwitchToSwitch(int from, int to) const {
    if (from == to) return {};
    Route r{switch_uplink_[from].up};
    const int sa = SocketOfSwitch(from), sb = SocketOfSwitch(to);
    if (sa != sb) r.push_back(socket_link_[sa][sb]);
    r.push_back(switch_uplink_[to].down);
    return r;
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

  int NicSwitch(int nic) const { return SwitchOf(nic * GpusPerNic()); }

  Route GpuToNetwork(int a) const {
    const int nic = a / GpusPerNic();
    if (!g_.pcie) return {nic_[nic].up};
    Route r{gpu_pcie_[a].up};
    Append(r, SwitchToSwitch(SwitchOf(a), NicSwitch(nic)));
    r.push_back(nic_[nic].up);
    return r;
  }

  Route NetworkToGpu(int a) const {
    const int nic = a / GpusPerNic();
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

  Route GpuToCpu(int a, int socket) const {
    if (!g_.pcie) return {host_link_[a].up};
    Route r{gpu_pcie_[a].up, switch_uplink_[SwitchOf(a)].up};
    if (socket != SocketOf(a)) r.push_back(socket_link_[SocketOf(a)][socket]);
    return r;
  }

  const ServerGroup& g_;
  std::string prefix_;
  sg4::NetZone* zone_ = nullptr;
  NetPoint* gateway_ = nullptr;
  std::vector<sg4::Host*> gpus_;
  std::vector<sg4::Host*> cpus_;
  std::vector<Duplex> nvswitch_, gpu_pcie_, switch_uplink_, host_link_, nic_;
  std::map<std::pair<int, int>, sg4::Link*> nvlink_;
  std::vector<std::vector<sg4::Link*>> socket_link_;
};

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
      if (p.gpus_per_switch < 1 || g.gpus_per_server % p.gpus_per_switch != 0 ||
          p.sockets < 1 || (g.gpus_per_server / p.gpus_per_switch) % p.sockets != 0) {
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

}  // namespace

Platform BuildPlatform(const ClusterSpec& cluster) {
  CheckCluster(cluster);
  sg4::NetZone* root = sg4::create_full_zone("cluster");
  Platform p;
  std::vector<std::unique_ptr<ServerBuilder>> servers;
  std::vector<double> server_nic_Bps;  // injection bandwidth of each server
  int rank = 0;
  for (int gi = 0; gi < static_cast<int>(cluster.groups.size()); ++gi) {
    const ServerGroup& g = cluster.groups[gi];
    const GpuSpec& gpu = cluster.GpuOfGroup(gi);
    for (int k = 0; k < g.count; ++k) {
      auto s = std::make_unique<ServerBuilder>(g, static_cast<int>(servers.size()), rank, root);
      s->Build(GpuSpeed(gpu));
      for (int j = 0; j < g.gpus_per_server; ++j) {
        p.gpus.push_back(s->gpus()[j]);
        p.host_cpus.push_back(s->CpuOf(j));
        p.gpu_speed.push_back(GpuSpeed(gpu));
      }
      rank += g.gpus_per_server;
      server_nic_Bps.push_back(g.nics.count * g.nics.link.bandwidth_Bps);
      servers.push_back(std::move(s));
    }
  }

  const NetworkSpec& net = cluster.network;
  const int num_servers = static_cast<int>(servers.size());
  if (net.kind == NetworkKind::kSingleSwitch) {
    sg4::Link* sw = MakeFatpipe(root, "switch", net.switch_latency_s);
    for (int a = 0; a < num_servers; ++a) {
      for (int b = 0; b < num_servers; ++b) {
        if (a == b) continue;
        AddRoute(root, servers[a]->zone()->get_netpoint(), servers[b]->zone()->get_netpoint(),
                 servers[a]->gateway(), servers[b]->gateway(), {sw});
      }
    }
  } else {
    const int per_leaf = net.servers_per_leaf;
    const int leaves = (num_servers + per_leaf - 1) / per_leaf;
    std::vector<sg4::Link*> leaf;
    std::vector<Duplex> uplink;
    sg4::Link* spine = MakeFatpipe(root, "spine", net.switch_latency_s);
    for (int l = 0; l < leaves; ++l) {
      leaf.push_back(MakeFatpipe(root, "leaf" + std::to_string(l), net.switch_latency_s));
      double down_Bps = 0;
      for (int s = l * per_leaf; s < std::min(num_servers, (l + 1) * per_leaf); ++s) {
        down_Bps += server_nic_Bps[s];
      }
      uplink.push_back(MakeDuplex(root, "leaf" + std::to_string(l) + "_uplink",
                                  LinkSpec{down_Bps / net.oversubscription, 0}));
    }
    for (int a = 0; a < num_servers; ++a) {
      for (int b = 0; b < num_servers; ++b) {
        if (a == b) continue;
        const int la = a / per_leaf, lb = b / per_leaf;
        Route r = la == lb ? Route{leaf[la]}
                           : Route{leaf[la], uplink[la].up, spine, uplink[lb].down, leaf[lb]};
        AddRoute(root, servers[a]->zone()->get_netpoint(), servers[b]->zone()->get_netpoint(),
                 servers[a]->gateway(), servers[b]->gateway(), r);
      }
    }
  }
  root->seal();
  return p;
}

}  // namespace stratasim::sim
