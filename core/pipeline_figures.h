// What a pipelined plan decided that the trace cannot show (docs/report-formats.md,
// "pipeline"): the partition, who chose it, how long choosing took and what the chooser
// predicted. The pipeline lowering fills it for every pipelined plan (kinds pipeline and 3d,
// strategies/pipeline/pipeline_figures.h); a planner (strategies/planners/planner.h) then
// overwrites `planner`, `planning_s` and the predictions. The report reads it beside what the
// trace measured (Metrics::stage_compute_s, startup_s, stage_bubble_fraction).
#ifndef STRATASIM_CORE_PIPELINE_FIGURES_H_
#define STRATASIM_CORE_PIPELINE_FIGURES_H_

#include <string>
#include <vector>

namespace stratasim {

struct PipelineFigures {
  // Units per stage, stage 0 first, e.g. "9,8,8,9". With the interleaved schedule each stage's
  // v chunks are joined by '+' in the order the stage runs them (stage 0 of 4 with v = 2 holds
  // chunks 0 and 4), e.g. "3+2,3+3,3+3,2+3". Transformer layers are counted as the option
  // `partition` counts them: the repeated blocks only, the embedding being part of the first
  // stage and the head of the last.
  std::string partition;
  std::string partition_unit = "layers";  // what `partition` counts: "layers" or "blocks"
  int stages = 0;
  std::string planner = "manual";  // "manual" for the options' partition (even or counts)
  // Wall-clock seconds the planner took to choose (0 for "manual"): the one figure of a run
  // that is not deterministic.
  double planning_s = 0;
  // The planner's own estimates: per stage, the forward + backward seconds of one micro-batch,
  // and the whole iteration; empty and 0 when it made none.
  std::vector<double> predicted_stage_s;
  double predicted_iteration_s = 0;
};

}  // namespace stratasim

#endif  // STRATASIM_CORE_PIPELINE_FIGURES_H_
