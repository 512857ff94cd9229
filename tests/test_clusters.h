// Small clusters built in code for integration tests, so closed forms are easy to write.
#ifndef STRATASIM_TESTS_TEST_CLUSTERS_H_
#define STRATASIM_TESTS_TEST_CLUSTERS_H_

#include <string>

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

}  // namespace stratasim::testing

#endif  // STRATASIM_TESTS_TEST_CLUSTERS_H_
