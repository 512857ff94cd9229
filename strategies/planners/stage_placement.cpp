// Where the stages of a pipeline run (stage_placement.h).
#include "strategies/planners/stage_placement.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace stratasim::planners {

std::vector<int> DefaultRanks(const PlannerInput& in) {
  std::vector<int> ranks(static_cast<size_t>(in.data) * in.stages * in.tensor);
  for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int>(i);
  return ranks;
}

StagePlacement PlacementOf(const PlannerInput& in, const std::vector<int>& ranks) {
  const ClusterView& c = in.cluster;
  const int stages = in.stages, tensor = in.tensor, data = in.data;
  if (stages < 1 || tensor < 1 || data < 1 ||
      ranks.size() != static_cast<size_t>(stages) * tensor * data) {
    throw Error("planner: " + std::to_string(ranks.size()) + " ranks for " + std::to_string(data) +
                " replicas x " + std::to_string(stages) + " stages x " + std::to_string(tensor) +
                " tensor");
  }
  for (int r : ranks) {
    if (r < 0 || r >= c.Gpus()) {
      throw Error("planner: rank " + std::to_string(r) + " is not in the cluster's " +
                  std::to_string(c.Gpus()) + " GPUs");
    }
  }
  auto gpu = [&](int replica, int stage) { return ranks[(replica * stages + stage) * tensor]; };
  StagePlacement p;
  p.gpus.resize(stages);
  for (int s = 0; s < stages; ++s) {
    for (int r = 0; r < data; ++r) {
      const ClusterView::Device& d = c.devices[gpu(r, s)];
      p.gpus[s].push_back({d.kind, d.memory_bytes * in.memory_fraction});
    }
  }
  for (int s = 0; s + 1 < stages; ++s) {
    double bps = 0, latency = 0;
    for (int r = 0; r < data; ++r) {
      const ClusterView::Device& a = c.devices[gpu(r, s)];
      const ClusterView::Device& b = c.devices[gpu(r, s + 1)];
      const bool same = a.server == b.server;
      const double link =
          same ? c.intra_Bps[a.server] : std::min(c.nic_Bps[a.nic], c.nic_Bps[b.nic]);
      if (r == 0 || link < bps) bps = link;
      latency = std::max(latency, same ? c.intra_latency_s : c.inter_latency_s);
    }
    p.send_Bps.push_back(bps);
    p.send_latency.push_back(latency);
  }
  return p;
}

}  // namespace stratasim::planners
