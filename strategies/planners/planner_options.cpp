#include "strategies/planners/planner_options.h"

#include <algorithm>

#include "strategies/pipeline/pipeline.h"

namespace stratasim::planners {

const OptionSpecs& PlannerOptions() {
  // The pipeline kind's own declarations of the settings a planner does not decide, so that
  // their meaning and defaults are written once.
  static const std::vector<std::string> kShared = {
      "stages",         "tensor",        "data",       "rank_order", "sequence_parallel",
      "scatter_gather", "micro_batches", "dp_overlap", "bucket_size"};
  static const OptionSpecs shared = [] {
    OptionSpecs out;
    for (const OptionSpec& o : PipelineOptions(false)) {
      if (std::find(kShared.begin(), kShared.end(), o.key) != kShared.end()) out.push_back(o);
    }
    return out;
  }();
  return shared;
}

PipelineShape ReadPlannerShape(const Scenario& s, OptionReader& opt, PlannerDegrees& degrees) {
  PipelineShape o = ReadPipelineDegrees(s, opt, false);
  o.m = ReadMicroBatches(s, opt, o.d);
  o.schedule = "1f1b";
  degrees.stages = o.p;
  degrees.tensor = o.t;
  degrees.data = o.d;
  degrees.micro_batches = o.m;
  degrees.sequence_parallel = o.sp;
  return o;
}

}  // namespace stratasim::planners
