// What a cluster is made of: server groups (GPU kind, count, fabric inside, NICs) and the
// network between servers. Plain data filled by the scenario loader and read by sim/.
#ifndef STRATASIM_CORE_CLUSTER_H_
#define STRATASIM_CORE_CLUSTER_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/hardware.h"
#include "core/stragglers.h"

namespace stratasim {

// A connection. Full duplex (the default, as NVLink, PCIe and InfiniBand are): each
// direction has `bandwidth_Bps` on its own. Half duplex: both directions share it.
//
// `bandwidth_Bps` is what the simulator uses: the achievable rate. A scenario gives the line
// rate; the loader keeps it in `line_Bps` and sets bandwidth_Bps = line_Bps x efficiency, with
// the link's `efficiency` or the default for its kind and GPU generation
// (core/link_efficiency.h). Links built in code (line_Bps 0) are taken as given.
struct LinkSpec {
  double bandwidth_Bps = 0;
  double latency_s = 0;
  bool full_duplex = true;
  double line_Bps = 0;            // as the scenario wrote it; 0 when built in code
  double efficiency = 1;          // bandwidth_Bps / line_Bps
  bool efficiency_given = false;  // written in the scenario: a calibration file keeps it
};

// Every GPU has a port of `link` bandwidth per direction into a non-blocking switch
// (DGX/HGX A100, H100, H200).
struct NvSwitchSpec {
  LinkSpec link;
};

// Direct NVLink connections between GPU pairs (bridges, DGX-1 hybrid cube mesh). `link` is the
// aggregate of the NVLink lanes between one pair, per direction. Pairs use server-local indices.
struct NvLinkSpec {
  std::vector<std::pair<int, int>> pairs;
  LinkSpec link;
};

// A PCIe tree: `gpus_per_switch` GPUs (and the NICs serving them) under each PCIe switch,
// switches spread evenly over `sockets` CPU sockets joined by `socket_link` (UPI/QPI/xGMI).
struct PcieSpec {
  int gpus_per_switch = 1;
  int sockets = 1;
  LinkSpec link;         // GPU or NIC <-> PCIe switch
  LinkSpec uplink;       // PCIe switch <-> CPU socket
  LinkSpec socket_link;  // socket <-> socket
};

// NICs of one server; GPUs share them in contiguous blocks of gpus_per_server / count.
struct NicSpec {
  int count = 1;
  LinkSpec link;
};

struct ServerGroup {
  std::string name;
  int count = 1;  // servers in this group
  std::string gpu;
  std::string gpu_path;      // "cluster.servers[0].gpu", for errors about the kind
  SourceLocation gpu_where;  // where the kind is named
  int gpus_per_server = 1;
  std::optional<NvSwitchSpec> nvswitch;
  std::optional<NvLinkSpec> nvlink;
  std::optional<PcieSpec> pcie;
  NicSpec nics;
  // Per-hop latencies measured by `calibrate --fabric` (core/calibration.h, `fabric:`), by
  // protocol name ("simple", "ll", "ll128"): the whole cost of one algorithm step between two
  // GPUs of this server (intra) or out of its NIC (inter), software included. Where set, the
  // simulator pays this per step instead of the route latency plus NCCL's documented step and
  // base latencies (sim/collectives/protocol.h). Empty: the documented figures.
  std::map<std::string, double> measured_intra_step_s;
  std::map<std::string, double> measured_inter_step_s;
};

enum class NetworkKind {
  kSingleSwitch,   // one non-blocking switch joins every NIC
  kLeafSpine,      // servers under leaf switches; leaves joined by spines with oversubscription
  kRailOptimized,  // NIC k of every server on leaf (rail) k; rails joined by spines
};

struct NetworkSpec {
  NetworkKind kind = NetworkKind::kSingleSwitch;
  double switch_latency_s = 0;  // per switch crossed
  int servers_per_leaf = 1;     // kLeafSpine only
  // Downlink/uplink capacity ratio of a leaf (kLeafSpine, kRailOptimized): 1 is a full-bisection
  // fat tree, 4 means a leaf's uplinks carry a quarter of what its servers' NICs can inject.
  double oversubscription = 1;
};

// Where a global rank lives. Ranks are numbered server-major in the order the groups are
// listed: group 0's servers first, GPUs of a server consecutive.
struct GpuLocation {
  int group = 0;
  int server = 0;  // global server index
  int local = 0;   // index of the GPU inside its server
};

struct ClusterSpec {
  std::vector<ServerGroup> groups;
  NetworkSpec network;
  std::vector<GpuSpec> gpu_kinds;  // every kind the groups name, resolved from the catalog
  Stragglers stragglers;           // slowed GPUs, links and servers (core/stragglers.h)

  int NumGpus() const;
  int NumServers() const;
  GpuLocation Locate(int rank) const;
  // GPU kind of a group or of a rank; throws stratasim::Error if the kind is unknown.
  const GpuSpec& GpuOfGroup(int group) const;
  const GpuSpec& GpuOfRank(int rank) const;
};

}  // namespace stratasim

#endif  // STRATASIM_CORE_CLUSTER_H_
