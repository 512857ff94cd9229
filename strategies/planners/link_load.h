// The load a pipeline's mapping puts on the cluster's shared links (AutoPipe-H's device mapping,
// docs/strategies.md, "autopipe-h"): per iteration, the bytes each NIC and each PCIe switch's
// uplink carries per direction, from the stage-boundary transfers between servers or switches
// (activations forward, their gradients back) and from each stage's data-parallel all-reduce
// (a ring over its replicas in rank order: 2 (n - 1) / n of the stage's gradient bytes on each
// ring edge). A link's load is its busier direction's bytes over its bandwidth: the seconds it
// is busy in an iteration. A PCIe switch's uplink is taken at the server's GPU-to-GPU bandwidth.
#ifndef STRATASIM_STRATEGIES_PLANNERS_LINK_LOAD_H_
#define STRATASIM_STRATEGIES_PLANNERS_LINK_LOAD_H_

#include <string>
#include <vector>

#include "strategies/planners/planner.h"

namespace stratasim::planners {

struct LinkLoad {
  double seconds = 0;  // the busiest link's busy time per iteration
  double bytes = 0;    // and the bytes on its busier direction
  std::string link;    // "NIC 2" or "PCIe switch 5"; empty when no shared link carries anything
};

// The busiest shared link of `ranks` (PlannedPipeline::ranks' layout) for the partition `bounds`
// and in.micro_batches micro-batches of in.profile.micro_batch samples.
LinkLoad BusiestLink(const PlannerInput& in, const std::vector<int>& ranks,
                     const std::vector<int>& bounds, double gradient_bytes_per_param);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_LINK_LOAD_H_
