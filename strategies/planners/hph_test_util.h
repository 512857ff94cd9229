// Hand-made planner inputs for HPH's unit tests: uniform blocks on a fast and a slow GPU kind.
#ifndef STRATASIM_STRATEGIES_PLANNERS_HPH_TEST_UTIL_H_
#define STRATASIM_STRATEGIES_PLANNERS_HPH_TEST_UTIL_H_

#include <string>
#include <vector>

#include "strategies/planners/planner.h"

namespace stratasim::planners::testing {

// `blocks` identical blocks: forward 1 s and backward 2 s on kind "fast", `slow_factor` times
// that on kind "slow"; 100 B of activations (10 B with recomputation), 1 parameter (16 B of
// states), recomputable.
inline CostProfile TwoKindProfile(int blocks, double slow_factor) {
  CostProfile p;
  p.kinds = {"fast", "slow"};
  p.costs.resize(2);
  for (int k = 0; k < 2; ++k) {
    const double f = k == 0 ? 1 : slow_factor;
    for (int i = 0; i < blocks; ++i) {
      BlockCost b;
      b.name = "block" + std::to_string(i);
      b.forward_s = f;
      b.backward_s = 2 * f;
      b.recompute_s = f;
      b.activation_bytes = 100;
      b.checkpoint_bytes = 10;
      b.params = 1;
      b.output_bytes = 5;
      b.recomputable = true;
      p.costs[k].push_back(b);
    }
  }
  return p;
}

// Servers of `per_server` GPUs, server i of kind kinds[i], with `memory[i]` bytes per GPU; two
// GPUs per PCIe switch.
inline ClusterView Servers(const std::vector<int>& kinds, const std::vector<double>& memory,
                           int per_server) {
  ClusterView c;
  for (size_t s = 0; s < kinds.size(); ++s) {
    c.intra_Bps.push_back(100e9);
    for (int g = 0; g < per_server; ++g) {
      ClusterView::Device d;
      d.kind = kinds[s];
      d.server = static_cast<int>(s);
      d.nic = static_cast<int>(s);
      d.pcie_switch = static_cast<int>(s) * per_server / 2 + g / 2;
      d.memory_bytes = memory[s];
      c.devices.push_back(d);
    }
    c.nic_Bps.push_back(10e9);
  }
  return c;
}

inline PlannerInput Input(CostProfile p, ClusterView c, int stages, int tensor, int data,
                          int micro_batches) {
  PlannerInput in;
  in.profile = std::move(p);
  in.cluster = std::move(c);
  in.stages = stages;
  in.tensor = tensor;
  in.data = data;
  in.micro_batches = micro_batches;
  return in;
}

}  // namespace stratasim::planners::testing

#endif  // STRATASIM_STRATEGIES_PLANNERS_HPH_TEST_UTIL_H_
