#include "core/cluster.h"

#include "core/error.h"

namespace stratasim {

int ClusterSpec::NumGpus() const {
  int n = 0;
  for (const ServerGroup& g : groups) n += g.count * g.gpus_per_server;
  return n;
}

int ClusterSpec::NumServers() const {
  int n = 0;
  for (const ServerGroup& g : groups) n += g.count;
  return n;
}

GpuLocation ClusterSpec::Locate(int rank) const {
  if (rank < 0) throw Error("rank " + std::to_string(rank) + " is negative");
  int first_rank = 0;
  int first_server = 0;
  for (int gi = 0; gi < static_cast<int>(groups.size()); ++gi) {
    const ServerGroup& g = groups[gi];
    int n = g.count * g.gpus_per_server;
    if (rank < first_rank + n) {
      int offset = rank - first_rank;
      return GpuLocation{gi, first_server + offset / g.gpus_per_server, offset % g.gpus_per_server};
    }
    first_rank += n;
    first_server += g.count;
  }
  throw Error("rank " + std::to_string(rank) + " is outside the cluster of " +
              std::to_string(NumGpus()) + " GPUs");
}

const GpuSpec& ClusterSpec::GpuOfGroup(int group) const {
  const std::string& name = groups.at(group).gpu;
  for (const GpuSpec& k : gpu_kinds) {
    if (k.name == name) return k;
  }
  throw Error("GPU kind '" + name + "' of server group '" + groups.at(group).name +
              "' is not in the cluster's GPU kinds");
}

const GpuSpec& ClusterSpec::GpuOfRank(int rank) const { return GpuOfGroup(Locate(rank).group); }

}  // namespace stratasim
