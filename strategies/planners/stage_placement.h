// Where the stages of a pipeline run, as AutoPipe's partitioner sees it: each stage's GPUs (one
// per replica) with their kinds and memories, and the links between consecutive stages.
#ifndef STRATASIM_STRATEGIES_PLANNERS_STAGE_PLACEMENT_H_
#define STRATASIM_STRATEGIES_PLANNERS_STAGE_PLACEMENT_H_

#include <vector>

#include "strategies/planners/planner.h"

namespace stratasim::planners {

struct StagePlacement {
  struct Gpu {
    int kind = 0;
    double memory_bytes = 0;  // usable: the device's memory times the memory fraction
  };
  std::vector<std::vector<Gpu>> gpus;  // [stage]: its GPUs, one per replica
  // [stage boundary s -> s + 1]: the slowest link between the two stages' GPUs over the
  // replicas (the server's GPU-to-GPU bandwidth, or the slower NIC across servers).
  std::vector<double> send_Bps, send_latency;

  int Stages() const { return static_cast<int>(gpus.size()); }
};

// The default order of PlannedPipeline::ranks: tensor fastest, then stages, then replicas.
std::vector<int> DefaultRanks(const PlannerInput& in);

// The placement of `ranks` (PlannedPipeline::ranks' layout; the first GPU of each tensor group
// stands for it). Throws stratasim::Error when the degrees do not match the ranks or a rank is
// not in the cluster.
StagePlacement PlacementOf(const PlannerInput& in, const std::vector<int>& ranks);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_STAGE_PLACEMENT_H_
