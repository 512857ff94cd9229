// What the HTML report shows, read from an outputs folder (docs/report.md): results.json,
// links.json, the Chrome traces and validation.json, gathered into one JSON object that the page
// embeds and draws. A missing optional input becomes a sentence in that object saying what is
// missing and how to get it; a file that is there but wrong is an error.
#ifndef STRATASIM_REPORT_REPORT_INPUTS_H_
#define STRATASIM_REPORT_REPORT_INPUTS_H_

#include <cstddef>
#include <string>
#include <vector>

namespace stratasim {

struct ReportOptions {
  std::vector<int> gpus;  // the timeline's GPUs; empty: DefaultTimelineGpus (trace_excerpt.h)
  int busiest_links = 8;  // link-utilisation lines per strategy
  // Timeline bars per strategy: enough for one iteration of a few GPUs of the bundled
  // scenarios, few enough for the browser to draw at once.
  size_t max_bars = 4000;
  // Per-rank memory bars past which ranks are grouped (each group shows its largest peak).
  int max_memory_bars = 64;
};

// The page's data (a compact JSON object; its keys are in docs/report.md). Throws
// stratasim::Error naming the file and key when an input is malformed, and when `dir` holds
// neither results.json nor validation.json.
std::string ReportDataJson(const std::string& dir, const ReportOptions& options);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_REPORT_INPUTS_H_
