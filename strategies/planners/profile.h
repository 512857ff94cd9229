// Builds a planner's input (planner.h) from a scenario: the sub-layer blocks of the model, their
// costs on every GPU kind of the cluster from the simulator's own compute model
// (core/compute_model.h; a calibration file written by validate mode overrides its
// efficiencies, so a calibrated profile is the measured one), and the cluster's view.
//
// A block's time is its kernels' times run alone, plus its tensor-parallel collectives as ring
// collectives over the server's GPU-to-GPU links (Megatron-LM's f and g operators: one
// all-reduce after each row-parallel GEMM forward and one after each column-parallel GEMM's
// input gradient; a reduce-scatter and an all-gather instead with sequence parallelism). It is
// what the planner decides with; the simulator then measures the plan with contention.
#ifndef STRATASIM_STRATEGIES_PLANNERS_PROFILE_H_
#define STRATASIM_STRATEGIES_PLANNERS_PROFILE_H_

#include "models/workload.h"
#include "strategies/planners/planner.h"

namespace stratasim::planners {

// The blocks a planner partitions, for micro-batches of `micro_batch` samples on one GPU of a
// tensor group of `tensor` GPUs, without recomputation: the model's layers with each
// transformer layer split into its attention and MLP halves (models/sub_layers.h).
Workload PlannerBlocks(const Scenario& s, int tensor, bool sequence_parallel, int micro_batch);

// The blocks' costs on each GPU kind of s.cluster (see above).
CostProfile ProfileBlocks(const Scenario& s, const Workload& blocks, int tensor,
                          bool sequence_parallel);

// Each GPU's kind, server, NIC, PCIe switch, memory and peak; each server's GPU-to-GPU and
// each NIC's achievable bandwidth (core/cluster.h).
ClusterView ViewCluster(const Scenario& s, const CostProfile& profile);

// The degrees and settings a planner strategy read from its options (planner_options.h).
struct PlannerDegrees {
  int stages = 1, tensor = 1, data = 1;
  int micro_batches = 1;
  bool sequence_parallel = false;
};

// The profile of PlannerBlocks(s, d.tensor, ..., training.micro_batch), the cluster view and
// the degrees.
PlannerInput BuildPlannerInput(const Scenario& s, const PlannerDegrees& d);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_PROFILE_H_
