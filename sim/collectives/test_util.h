// Helpers shared by the collectives' unit tests: small clusters and collectives, and sums over
// flow programs. Test-only; header-only.
#ifndef STRATASIM_SIM_COLLECTIVES_TEST_UTIL_H_
#define STRATASIM_SIM_COLLECTIVES_TEST_UTIL_H_

#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/task_graph.h"
#include "sim/collectives/flow_program.h"
#include "sim/collectives/group_view.h"
#include "tests/test_clusters.h"

namespace stratasim::sim::testing {

// `servers` HGX-like servers of `gpus` GPUs on an NVSwitch (450 GB/s per direction, as NVLink 4
// gives an H100) with `nics` NICs of 50 GB/s (400 Gb/s InfiniBand NDR), on one switch.
inline ClusterSpec NvSwitchCluster(int servers, int gpus, int nics) {
  ClusterSpec c;
  ServerGroup g;
  g.name = "hgx";
  g.count = servers;
  g.gpu = "H100-SXM";
  g.gpus_per_server = gpus;
  g.nvswitch = NvSwitchSpec{LinkSpec{450e9, 1e-6}};
  g.nics = NicSpec{nics, LinkSpec{50e9, 2e-6}};
  c.groups.push_back(g);
  c.network.switch_latency_s = 1e-6;
  return c;
}

// `servers` DGX-1 V100 servers with `nics` NICs (tests/test_clusters.h has the figures), on one
// switch.
inline ClusterSpec Dgx1Cluster(int servers, int nics) {
  ClusterSpec c;
  c.groups.push_back(stratasim::testing::Dgx1V100Group("dgx1", servers, nics));
  c.network.switch_latency_s = 1e-6;
  return c;
}

inline bool NvLinked(const ClusterSpec& c, int a, int b) {
  for (const auto& [x, y] : c.groups[0].nvlink->pairs) {
    if ((x == a && y == b) || (x == b && y == a)) return true;
  }
  return false;
}

inline std::vector<int> Iota(int n, int first = 0) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(first + i);
  return v;
}

inline Collective MakeCollective(CollectiveKind kind, const std::vector<int>& ranks, double bytes,
                                 const std::string& algorithm = "auto") {
  Collective c;
  c.kind = kind;
  c.ranks = ranks;
  c.bytes = bytes;
  c.root = ranks.empty() ? 0 : ranks[0];
  c.algorithm = algorithm;
  return c;
}

// A view of `n` members on one NVSwitch server (no cluster needed).
inline GroupView FlatView(int n) { return MakeGroupView(NvSwitchCluster(1, n, 1), Iota(n)); }

inline double SentBy(const FlowProgram& p, int member) {
  double s = 0;
  for (const Flow& f : p.flows) s += f.src == member ? f.bytes : 0;
  return s;
}
inline double ReceivedBy(const FlowProgram& p, int member) {
  double s = 0;
  for (const Flow& f : p.flows) s += f.dst == member ? f.bytes : 0;
  return s;
}
inline double TotalBytes(const FlowProgram& p) {
  double s = 0;
  for (const Flow& f : p.flows) s += f.bytes;
  return s;
}
inline double EdgeBytes(const FlowProgram& p, int src, int dst) {
  double s = 0;
  for (const Flow& f : p.flows) s += f.src == src && f.dst == dst ? f.bytes : 0;
  return s;
}
// Bytes crossing servers sent by `member`.
inline double InterServerSentBy(const FlowProgram& p, const GroupView& v, int member) {
  double s = 0;
  for (const Flow& f : p.flows) {
    if (f.src == member && v.members[f.src].server != v.members[f.dst].server) s += f.bytes;
  }
  return s;
}

}  // namespace stratasim::sim::testing

#endif  // STRATASIM_SIM_COLLECTIVES_TEST_UTIL_H_
