// The MoE comparison printed under the main table when a run has MoE strategies.
#ifndef STRATASIM_REPORT_MOE_TABLE_H_
#define STRATASIM_REPORT_MOE_TABLE_H_

#include <string>
#include <vector>

#include "report/results.h"

namespace stratasim {

// The baseline of an MoE strategy: the first successful strategy, in scenario order, of the
// same top_k whose planner declares it plain expert parallelism (MoeSummary::is_baseline,
// from MoeFigures::baseline: DeepSpeed-MoE's); none when the run has no such strategy.
// Sets every MoE strategy's MoeSummary::speedup and baseline.
void SetMoeSpeedups(std::vector<StrategyResult>& strategies);

// One row per MoE strategy, in scenario order, under a header naming the baselines' kinds:
//   strategy  top-k  iter mean (ms)  p50  p95  min  max  tokens/s  speed-up  load-balance ratio
//   exposed a2a (ms)  placement (ms)  placement exposed (ms)  mem/GPU (GiB)
// "" when no strategy has MoE figures. Failed strategies are left out (the main table says
// why). Deterministic: fixed precision, widths from the content.
std::string FormatMoeTable(const RunResults& r);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_MOE_TABLE_H_
