// Helpers the pipeline planners share (planner.h).
#include "strategies/planners/planner.h"

#include <algorithm>

#include "core/error.h"

namespace stratasim::planners {
namespace {

bool Recomputed(const std::vector<bool>& recompute, int block) {
  return block < static_cast<int>(recompute.size()) && recompute[block];
}

}  // namespace

std::vector<double> PrefixTimes(const std::vector<BlockCost>& costs) {
  std::vector<double> prefix(costs.size() + 1, 0);
  for (size_t i = 0; i < costs.size(); ++i) {
    prefix[i + 1] = prefix[i] + costs[i].forward_s + costs[i].backward_s;
  }
  return prefix;
}

double RangeSeconds(const std::vector<BlockCost>& costs, int first, int end,
                    const std::vector<bool>& recompute) {
  double t = 0;
  for (int i = first; i < end; ++i) {
    const BlockCost& b = costs[i];
    t += b.forward_s + b.backward_s + (Recomputed(recompute, i) ? b.recompute_s : 0);
  }
  return t;
}

double StageMemoryBytes(const CostProfile& profile, int kind, int first, int end, int in_flight,
                        const std::vector<bool>& recompute) {
  const std::vector<BlockCost>& costs = profile.costs[kind];
  double params = 0, kept = 0, largest_recomputed = 0;
  for (int i = first; i < end; ++i) {
    const BlockCost& b = costs[i];
    params += b.params;
    if (Recomputed(recompute, i)) {
      kept += b.checkpoint_bytes;
      // While its backward runs, a recomputed block holds its re-created activations too.
      largest_recomputed = std::max(largest_recomputed, b.activation_bytes);
    } else {
      kept += b.activation_bytes;
    }
  }
  return params * profile.state_bytes_per_param + in_flight * kept + largest_recomputed;
}

void CheckPlannerInput(const PlannerInput& in) {
  const CostProfile& p = in.profile;
  auto fail = [](const std::string& why) { throw Error("pipeline planner: " + why); };
  if (p.costs.empty() || p.costs.size() != p.kinds.size()) {
    fail("the cost profile has " + std::to_string(p.costs.size()) + " kinds of costs for " +
         std::to_string(p.kinds.size()) + " GPU kinds");
  }
  for (const std::vector<BlockCost>& costs : p.costs) {
    if (static_cast<int>(costs.size()) != p.Blocks()) fail("the kinds' block lists differ");
  }
  if (in.stages < 1 || in.tensor < 1 || in.data < 1 || in.micro_batches < 1) {
    fail("degrees and micro-batches must be at least 1");
  }
  if (p.Blocks() < in.stages) {
    fail(std::to_string(p.Blocks()) + " blocks cannot fill " + std::to_string(in.stages) +
         " stages");
  }
  if (in.stages * in.tensor * in.data > in.cluster.Gpus()) {
    fail(std::to_string(in.data) + " x " + std::to_string(in.stages) + " x " +
         std::to_string(in.tensor) + " GPUs exceed the cluster's " +
         std::to_string(in.cluster.Gpus()));
  }
  for (const ClusterView::Device& d : in.cluster.devices) {
    if (d.kind < 0 || d.kind >= static_cast<int>(p.kinds.size()) || d.server < 0 ||
        d.server >= in.cluster.Servers() || d.nic < 0 ||
        d.nic >= static_cast<int>(in.cluster.nic_Bps.size())) {
      fail("a device's kind, server or NIC is out of range");
    }
  }
}

std::string PartitionText(const std::vector<int>& bounds) {
  std::string text;
  for (size_t i = 1; i < bounds.size(); ++i) {
    if (i > 1) text += ",";
    text += std::to_string(bounds[i] - bounds[i - 1]);
  }
  return text;
}

}  // namespace stratasim::planners
