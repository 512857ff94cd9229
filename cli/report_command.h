// `stratasim report OUTDIR`: the HTML report of an outputs folder (docs/report.md), and the
// same report after `stratasim run --html`.
#ifndef STRATASIM_CLI_REPORT_COMMAND_H_
#define STRATASIM_CLI_REPORT_COMMAND_H_

#include <string>
#include <vector>

namespace stratasim {

// stratasim report OUTDIR [--out FILE] [--gpus LIST]
// Writes FILE (default OUTDIR/report.html) atomically. Returns the exit status: 0 written;
// 2 bad command line or input (UsageError); other errors are thrown for main's handler.
int ReportCommand(const std::vector<std::string>& args);

// --gpus "0,1,8": GPU ranks, each a non-negative integer, no repeats; a UsageError naming the
// flag and the bad item otherwise.
std::vector<int> ParseGpuList(const std::string& list);

// `run --html` and `validate --html`: OUTDIR/report.html with the default GPUs; prints where
// it went.
void WriteRunReport(const std::string& out_dir);

}  // namespace stratasim

#endif  // STRATASIM_CLI_REPORT_COMMAND_H_
