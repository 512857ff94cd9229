// Helpers the pipeline planners share (planner.h).
#include "strategies/planners/planner.h"

#include <algorithm>

namespace stratasim::planners {
namespace {

bool Recomputed(const std::vector<bool>& recompute, int block) {
  return block < static_cast<int>(recompute.size()) && recompute[block];
}

}  // namespace

std::vector<double> PrefixTimes(const std::vector<BlockCost>& costs) {
  std::vector<double> prefix(costs.size() + 1, 0);
  for (size_t i = 0; i < costs.size(); ++i) {
    prefix[i + 1] = prefix[i] + costs[i].forward + costs[i].backward;
  }
  return prefix;
}

double RangeSeconds(const std::vector<BlockCost>& costs, int first, int end,
                    const std::vector<bool>& recompute) {
  double t = 0;
  for (int i = first; i < end; ++i) {
    const BlockCost& b = costs[i];
    t += b.forward + b.backward + (Recomputed(recompute, i) ? b.recompute : 0);
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

std::string PartitionText(const std::vector<int>& bounds) {
  std::string text;
  for (size_t i = 1; i < bounds.size(); ++i) {
    if (i > 1) text += ",";
    text += std::to_string(bounds[i] - bounds[i - 1]);
  }
  return text;
}

}  // namespace stratasim::planners
