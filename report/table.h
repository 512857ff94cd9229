// The console summary of a run: one row per strategy, fastest first to read at a glance.
#ifndef STRATASIM_REPORT_TABLE_H_
#define STRATASIM_REPORT_TABLE_H_

#include <string>

#include "report/results.h"

namespace stratasim {

// Formats `r` as a plain-text table (ASCII only, so that column widths are byte counts):
//
//   scenario: gpt-1.3b | GPUs: 2 x 8 A100-SXM4-80GB | model: GPT 1.3B, seq 2048
//
//   strategy  kind  iter (ms)  samples/s  tokens/s  TFLOP/s/GPU  MFU %  exposed comm %  ...
//   --------  ----  ---------  ---------  --------  -----------  -----  --------------  ...
//   ddp       data     512.30       62.5    127917        142.1   45.5            12.3  ...
//
// Columns: iteration time (ms), samples/s, tokens/s, model TFLOP/s per GPU, MFU (%), exposed
// communication (% of the iteration), peak memory per GPU (the maximum over ranks, GiB,
// followed by "OOM" when any rank exceeds its capacity; a note under the table then names the
// rank, its peak, its capacity and what it held at the peak by category) and "vs best": the
// iteration time over the best one ("1.00x" for the best). A strategy that failed shows "FAILED:
// <error>" in place of its figures. Plan notes follow the table as "  <strategy>: <note>" lines.
//
// The best iteration time is taken over the strategies that succeeded and fit in memory, as
// one that does not fit cannot run; if none fits, over all that succeeded.
//
// Output is deterministic: fixed precision, widths computed from the content, no trailing
// spaces, a newline after every line.
std::string FormatComparisonTable(const RunResults& r);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_TABLE_H_
