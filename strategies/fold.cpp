#include "strategies/fold.h"

#include <numeric>
#include <vector>

namespace stratasim {

namespace {

std::string Refusal(const Scenario& s, const ReplicaLayout& layout, int block_gpus) {
  if (!s.simulation.fold) return "simulation.fold is off";
  if (layout.replicas < 2) return "one data-parallel replica, nothing to fold";
  // A straggler makes its replica run differently from the representative's (core/stragglers.h).
  if (!s.cluster.stragglers.empty()) return "stragglers break the symmetry of the replicas";
  const ClusterSpec& c = s.cluster;
  const int gpus = layout.replicas * layout.replica_gpus;
  if (gpus % block_gpus != 0 || gpus / block_gpus < 2) {
    return "the replicas (" + std::to_string(layout.replicas) + " x " +
           std::to_string(layout.replica_gpus) + " GPUs) do not form two or more blocks of " +
           "whole servers";
  }
  if (c.groups.size() != 1) {
    return "the cluster has " + std::to_string(c.groups.size()) +
           " server groups, which may differ in GPUs or links";
  }
  const ServerGroup& g = c.groups[0];
  const int per_server = g.gpus_per_server;
  if (layout.tensor > per_server || per_server % layout.tensor != 0) {
    return "tensor groups of " + std::to_string(layout.tensor) + " span servers of " +
           std::to_string(per_server) + " GPUs";
  }
  const bool all_nvlink =
      g.nvlink && g.nvlink->pairs.size() == static_cast<size_t>(per_server * (per_server - 1) / 2);
  if (g.pcie && !g.nvswitch && !all_nvlink) {
    return "GPU-to-GPU traffic inside a server may cross the PCIe tree that network traffic "
           "uses";
  }
  if (c.network.kind == NetworkKind::kLeafSpine) {
    const int servers = c.NumServers();
    const int leaf = c.network.servers_per_leaf;
    const int replica_servers = block_gpus / per_server;
    if (servers % leaf != 0) {
      return "the last leaf holds " + std::to_string(servers % leaf) + " of " +
             std::to_string(leaf) + " servers: its uplink differs";
    }
    if (replica_servers % leaf != 0 && leaf % replica_servers != 0) {
      return "blocks of " + std::to_string(replica_servers) + " servers sit unequally under " +
             "leaves of " + std::to_string(leaf);
    }
  }
  return "";
}

}  // namespace

FoldDecision DecideFold(const Scenario& s, const ReplicaLayout& layout) {
  FoldDecision d;
  const int per_server = s.cluster.groups.empty() ? 1 : s.cluster.groups[0].gpus_per_server;
  d.block_gpus = std::lcm(layout.replica_gpus, per_server);
  d.refusal = Refusal(s, layout, d.block_gpus);
  d.fold = d.refusal.empty();
  d.block_replicas = d.fold ? d.block_gpus / layout.replica_gpus : layout.replicas;
  return d;
}

std::string DescribeFold(const FoldDecision& d, int gpus) {
  if (!d.fold) return "full: " + d.refusal;
  return "folded: " + std::to_string(gpus / d.block_gpus) + " blocks of " +
         std::to_string(d.block_replicas) + " replica(s) (" + std::to_string(d.block_gpus) +
         " GPUs) simulated as 1";
}

std::vector<int> FoldRepresentatives(int gpus, int block_gpus) {
  std::vector<int> rep(gpus);
  for (int r = 0; r < gpus; ++r) rep[r] = r % block_gpus;
  return rep;
}

}  // namespace stratasim
