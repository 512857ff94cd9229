// Small clusters built in code for integration tests, so closed forms are easy to write.
#ifndef STRATASIM_TESTS_TEST_CLUSTERS_H_
#define STRATASIM_TESTS_TEST_CLUSTERS_H_

#include <string>
#include <utility>
#include <vector>

#include "core/cluster.h"
#include "core/error.h"
#include "core/hardware.h"

namespace stratasim::testing {

struct NvSwitchOptions {
  int servers = 1;
  int gpus_per_server = 8;
  std::string gpu = "A100-SXM4-80GB";
  double nvswitch_Bps = 300e9;
  double nvswitch_latency_s = 1e-6;
  int nics = 8;
  double nic_Bps = 25e9;
  double nic_latency_s = 2e-6;
  double switch_latency_s = 1e-6;
};

// The default links with `servers` x `gpus_per_server` GPUs and `nics` NICs per server.
inline NvSwitchOptions NvSwitchLayout(int servers, int gpus_per_server, int nics) {
  NvSwitchOptions o;
  o.servers = servers;
  o.gpus_per_server = gpus_per_server;
  o.nics = nics;
  return o;
}

inline ServerGroup NvSwitchGroup(const std::string& name, const NvSwitchOptions& o) {
  ServerGroup g;
  g.name = name;
  g.count = o.servers;
  g.gpu = o.gpu;
  g.gpus_per_server = o.gpus_per_server;
  g.nvswitch = NvSwitchSpec{LinkSpec{o.nvswitch_Bps, o.nvswitch_latency_s}};
  g.nics = NicSpec{o.nics, LinkSpec{o.nic_Bps, o.nic_latency_s}};
  return g;
}

inline void ResolveGpus(ClusterSpec& c) {
  c.gpu_kinds.clear();
  for (const ServerGroup& g : c.groups) {
    const GpuSpec* k = FindBuiltinGpu(g.gpu);
    if (!k) throw Error("test cluster: unknown GPU " + g.gpu);
    bool have = false;
    for (const GpuSpec& x : c.gpu_kinds) have = have || x.name == k->name;
    if (!have) c.gpu_kinds.push_back(*k);
  }
}

inline ClusterSpec NvSwitchCluster(const NvSwitchOptions& o) {
  ClusterSpec c;
  c.groups.push_back(NvSwitchGroup("nvs", o));
  c.network.kind = NetworkKind::kSingleSwitch;
  c.network.switch_latency_s = o.switch_latency_s;
  ResolveGpus(c);
  return c;
}

// --- Servers other than NVSwitch boxes, and the networks between servers ---

// Two GPUs per PCIe 3.0 x16 switch (15.75 GB/s per direction, the switch's uplink alike), two
// sockets joined by a `socket_Bps` link (QPI, UPI).
inline PcieSpec Pcie3Tree(double socket_Bps) {
  PcieSpec pcie;
  pcie.gpus_per_switch = 2;
  pcie.sockets = 2;
  pcie.link = LinkSpec{15.75e9, 1e-6};
  pcie.uplink = pcie.link;
  pcie.socket_link = LinkSpec{socket_Bps, 1e-6};
  return pcie;
}

// DGX-1 (V100): NVLink2 hybrid cube mesh, two fully connected quads with GPU i linked to GPU
// i + 4, one 25 GB/s-per-direction NVLink2 per pair (the real box doubles some pairs, as
// scenarios/hetero-a100-v100.yaml notes); a PCIe 3.0 x16 tree (15.75 GB/s) with two GPUs per
// switch, two switches per socket, sockets joined by QPI (19.2 GB/s); `nics` EDR NICs
// (100 Gb/s; the real box has 4).
inline ServerGroup Dgx1V100Group(const std::string& name, int count, int nics) {
  ServerGroup g;
  g.name = name;
  g.count = count;
  g.gpu = "V100-SXM2";
  g.gpus_per_server = 8;
  g.nvlink = NvLinkSpec{{{0, 1},
                         {0, 2},
                         {0, 3},
                         {1, 2},
                         {1, 3},
                         {2, 3},
                         {4, 5},
                         {4, 6},
                         {4, 7},
                         {5, 6},
                         {5, 7},
                         {6, 7},
                         {0, 4},
                         {1, 5},
                         {2, 6},
                         {3, 7}},
                        LinkSpec{25e9, 1e-6}};
  g.pcie = Pcie3Tree(19.2e9);
  g.nics = NicSpec{nics, LinkSpec{12.5e9, 2e-6}};
  return g;
}

// The commodity box of scenarios/commodity-pcie.yaml: 4 x RTX 3090, two per PCIe 3.0 x16
// switch (15.75 GB/s), one switch per socket, sockets joined by UPI (20.8 GB/s); with
// `bridges`, NVLink bridges (56.25 GB/s per direction) join GPUs 0-1 and 2-3; `nics` 100 Gb/s
// NICs.
inline ServerGroup CommodityPcieGroup(const std::string& name, int count, bool bridges, int nics) {
  ServerGroup g;
  g.name = name;
  g.count = count;
  g.gpu = "RTX3090";
  g.gpus_per_server = 4;
  if (bridges) g.nvlink = NvLinkSpec{{{0, 1}, {2, 3}}, LinkSpec{56.25e9, 1e-6}};
  g.pcie = Pcie3Tree(20.8e9);
  g.nics = NicSpec{nics, LinkSpec{12.5e9, 2e-6}};
  return g;
}

inline NetworkSpec SingleSwitchNetwork(double switch_latency_s = 1e-6) {
  NetworkSpec n;
  n.kind = NetworkKind::kSingleSwitch;
  n.switch_latency_s = switch_latency_s;
  return n;
}

inline NetworkSpec LeafSpineNetwork(int servers_per_leaf, double oversubscription,
                                    double switch_latency_s = 1e-6) {
  NetworkSpec n;
  n.kind = NetworkKind::kLeafSpine;
  n.servers_per_leaf = servers_per_leaf;
  n.oversubscription = oversubscription;
  n.switch_latency_s = switch_latency_s;
  return n;
}

inline NetworkSpec RailOptimizedNetwork(double oversubscription, double switch_latency_s = 1e-6) {
  NetworkSpec n;
  n.kind = NetworkKind::kRailOptimized;
  n.oversubscription = oversubscription;
  n.switch_latency_s = switch_latency_s;
  return n;
}

// A cluster of `groups` joined by `network`, GPU kinds resolved from the catalog.
inline ClusterSpec ClusterOf(std::vector<ServerGroup> groups, const NetworkSpec& network) {
  ClusterSpec c;
  c.groups = std::move(groups);
  c.network = network;
  ResolveGpus(c);
  return c;
}

}  // namespace stratasim::testing

#endif  // STRATASIM_TESTS_TEST_CLUSTERS_H_
