// Hand-made cost profiles and clusters for the planners' unit tests.
#ifndef STRATASIM_STRATEGIES_PLANNERS_TEST_PROFILES_H_
#define STRATASIM_STRATEGIES_PLANNERS_TEST_PROFILES_H_

#include <string>
#include <vector>

#include "strategies/planners/planner.h"

namespace stratasim::planners::testing {

// One block per entry of `seconds` (forward + backward, backward twice the forward), each with
// `activation` bytes kept per micro-batch, a tenth of it when recomputed, and 1 parameter.
inline std::vector<BlockCost> Blocks(const std::vector<double>& seconds, double activation = 100) {
  std::vector<BlockCost> blocks;
  for (size_t i = 0; i < seconds.size(); ++i) {
    BlockCost b;
    b.name = "block" + std::to_string(i);
    b.forward_s = seconds[i] / 3;
    b.backward_s = 2 * seconds[i] / 3;
    b.recompute_s = b.forward_s;
    b.recomputable = true;
    b.activation_bytes = activation;
    b.checkpoint_bytes = activation / 10;
    b.params = 1;
    b.output_bytes = 10;
    blocks.push_back(b);
  }
  return blocks;
}

// `servers` x `per_server` GPUs of kind `kinds[server]`, one NIC per server, PCIe switches of
// `per_switch` GPUs, `memory` bytes each.
inline ClusterView Cluster(int servers, int per_server, double memory = 1e18,
                           std::vector<int> kinds = {}, int per_switch = 0) {
  ClusterView c;
  for (int s = 0; s < servers; ++s) {
    for (int g = 0; g < per_server; ++g) {
      ClusterView::Device d;
      d.kind = kinds.empty() ? 0 : kinds[s];
      d.server = s;
      d.nic = s;
      d.pcie_switch = per_switch > 0 ? (s * per_server + g) / per_switch : -1;
      d.memory_bytes = memory;
      c.devices.push_back(d);
    }
    c.intra_Bps.push_back(16e9);
    c.nic_Bps.push_back(1e9);
  }
  return c;
}

// A planner input of one kind: `blocks` on `stages` x `data` GPUs of one server.
inline PlannerInput Input(const std::vector<BlockCost>& blocks, int stages, int micro_batches,
                          int data = 1) {
  PlannerInput in;
  in.profile.kinds = {"gpu"};
  in.profile.costs = {blocks};
  in.profile.micro_batch = 2;
  in.stages = stages;
  in.data = data;
  in.micro_batches = micro_batches;
  in.cluster = Cluster(1, stages * data);
  return in;
}

}  // namespace stratasim::planners::testing

#endif  // STRATASIM_STRATEGIES_PLANNERS_TEST_PROFILES_H_
