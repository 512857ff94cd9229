// AutoPipe-H (IEEE TC 2024; docs/strategies.md, "autopipe-h"): AutoPipe's partitioner on a
// heterogeneous cluster, plus a device mapping of the (replica, stage) positions to GPUs that
// keeps the shared links (NICs, PCIe switches) lightly loaded.
//
// A mapping is scored by AutoPipe's simulated 1F1B with the partition planned for it (a stage
// runs at the speed of the slowest GPU kind it is mapped to) plus the busy time of its busiest
// shared link (link_load.h), with no overlap assumed between the two. The contention mapping
// starts from the rank order and from the stage-major order (a stage's replicas side by side)
// and swaps pairs of positions while that lowers the score (first improvement, in a fixed
// order), keeping the better of the two; the naive mapping is the rank order.
#ifndef STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_H_H_
#define STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_H_H_

#include <string>
#include <vector>

#include "strategies/planners/autopipe.h"
#include "strategies/planners/link_load.h"

namespace stratasim::planners {

enum class DeviceMapping { kContention, kNaive };

struct AutoPipeHSettings {
  AutoPipeSettings autopipe;
  DeviceMapping mapping = DeviceMapping::kContention;
  // Bytes of one parameter's gradient in the data-parallel all-reduce (2: 16-bit gradients).
  double gradient_bytes_per_param = 2;
  int max_mappings = 20000;  // mappings the swap search scores at most
};

struct MappingScore {
  std::vector<int> ranks;
  std::vector<int> bounds;      // the partition planned for the mapping (no slicing)
  double pipeline_seconds = 0;  // its simulated 1F1B; infinite when no partition fits
  LinkLoad busiest;
  double Total() const { return pipeline_seconds + busiest.seconds; }
};

// Scores `ranks` (PlannedPipeline::ranks' layout).
MappingScore ScoreMapping(const PlannerInput& in, const std::vector<int>& ranks,
                          const AutoPipeHSettings& settings);

// The positions' GPUs in rank order, and in stage-major order (stage s of replica r on the
// (s * data + r)-th group of `tensor` GPUs).
std::vector<int> NaiveRanks(const PlannerInput& in);
std::vector<int> StageMajorRanks(const PlannerInput& in);

// Throws stratasim::Error when the input is inconsistent, a tensor group would span servers, or
// no partition fits in memory.
PlannedPipeline PlanAutoPipeH(const PlannerInput& in, const AutoPipeHSettings& settings = {});

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_H_H_
