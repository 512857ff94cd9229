// The profile Oases' planner decides with (oases_planner.h), built from the simulator's own cost
// model instead of the paper's measured table (oases/profile/profiler.py measures fwd, bwd, comm
// and memory per hidden size, degree and half batch on the GPUs):
//   - compute: the sub-layer blocks of PlannerBlocks (profile.h), sharded for degree t and sized
//     for one sub-batch, timed by ProfileBlocks (core/compute_model.h, or a calibration's
//     measured efficiencies); on a cluster of several GPU kinds, the slowest kind the strategy's
//     GPUs include, since every tensor and data-parallel rank waits for the slowest;
//   - communication: each all-reduce of the sub-batch's b s h activation as a ring all-reduce
//     over the tensor groups of t consecutive ranks (AllReduceSeconds, link_costs.h: alpha-beta
//     over the server's GPU-to-GPU bandwidth), as many as the sub-layer has row-parallel GEMMs
//     in the forward and column-parallel GEMMs in the backward (Megatron's g and f operators,
//     tp_layer.h);
//   - re-shard: between degrees a < b, each group of b ranks holds b / a groups of a ranks that
//     computed different samples, so the activation is all-gathered over the b / a ranks holding
//     the same shard index in the forward (Oases' "trans group" all-gather at its cutpoint; the
//     comments of oases/mpu/model_trans.py: "allgather activations" when the degree grows); the
//     gradient goes back by slicing, free. From b to a the all-gather is the gradient's, in the
//     backward. Either way one ring all-gather (half a ring all-reduce) of the whole
//     micro-batch's activation of the b-group;
//   - memory: per sub-layer, its parameters' model states (Adam, profile's state_bytes_per_param)
//     and the activations both sub-batches keep until the backward. With Oases' communication-
//     free recomputation a sub-layer keeps its input and its post-all-reduce output, and its
//     backward holds both sub-batches' recomputed activations (the working set); without it the
//     full activations are kept. The embedding's and the head's states and activations are
//     counted with the first and the last sub-layer, at their degrees.
// The limit is 0.95 of the smallest memory among the strategy's GPUs (planner.py: mem_budget =
// total_memory * 0.95).
#ifndef STRATASIM_STRATEGIES_PLANNERS_OASES_PROFILE_H_
#define STRATASIM_STRATEGIES_PLANNERS_OASES_PROFILE_H_

#include <vector>

#include "core/scenario.h"
#include "strategies/planners/oases_planner.h"

namespace stratasim::planners {

// Share of a GPU's memory the plan may fill (Oases' planner.py: total_memory * 0.95).
inline constexpr double kOasesMemoryFraction = 0.95;

// The TP degrees Oases may choose on the first `gpus` ranks of s.cluster: the divisors of every
// server group's GPU count (a tensor group stays inside a server, on its fast links) that also
// divide `gpus`, the model's attention heads and its key/value heads. Increasing; 1 included.
std::vector<int> OasesCandidateDegrees(const Scenario& s, int gpus);

struct OasesProfileRequest {
  std::vector<int> degrees;  // candidate degrees, increasing
  int gpus = 0;              // the strategy's GPUs: ranks 0 .. gpus - 1
  // Per degree: the samples one tensor group of that degree processes in one micro-batch, the
  // two sub-batches together (even: they are equal halves).
  std::vector<int> group_samples;
  bool recompute = true;  // Oases' communication-free recomputation
};

// The profile above. Throws stratasim::Error for a request that does not fit s (no degree, a
// degree that does not divide gpus, an odd or missing group_samples entry, gpus beyond the
// cluster) and ConfigError from the model's builders.
OasesProfile BuildOasesProfile(const Scenario& s, const OasesProfileRequest& r);

// kOasesMemoryFraction of the smallest GPU memory among ranks 0 .. gpus - 1.
double OasesMemoryLimitBytes(const Scenario& s, int gpus);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_OASES_PROFILE_H_
