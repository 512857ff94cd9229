// The pipeline figures of pipelined strategies (docs/report-formats.md, "pipeline"): what the
// plan decided (core/pipeline_figures.h) beside what the trace measured of its stages
// (Metrics::stage_compute_s, stage_bubble_fraction, startup_s), as a table printed under the
// main one and as the summary results.json and results.csv carry.
#ifndef STRATASIM_REPORT_PIPELINE_TABLE_H_
#define STRATASIM_REPORT_PIPELINE_TABLE_H_

#include <string>

#include "report/results.h"

namespace stratasim {

// Over the stages of a pipelined plan's metrics; zeros when it has none.
struct StageSummary {
  double max_stage_compute_s = 0;   // the slowest stage's compute per iteration
  double mean_stage_compute_s = 0;  // mean over stages
  double bubble_fraction = 0;       // mean over stages of Metrics::stage_bubble_fraction
};
StageSummary SummarizeStages(const Metrics& m);

// One row per successful strategy with pipeline figures, in scenario order:
//   strategy  planner  partition (layers)  max stage (ms)  mean stage (ms)  start-up (ms)
//   bubble  peak mem/stage (GiB)  planning (ms)  predicted / simulated (ms)
// "" when none has them. Deterministic but for planning times: fixed precision, widths from
// the content.
std::string FormatPipelineTable(const RunResults& r);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_PIPELINE_TABLE_H_
