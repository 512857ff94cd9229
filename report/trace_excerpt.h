// One iteration of a Chrome trace (report/chrome_trace.h), for a few GPUs: what the HTML
// report's timeline draws. A trace can be tens of MB (75 MB for MoE runs), so it is read line
// by line (the writer puts one event per line) and only the chosen GPUs' events of the last
// iteration are kept, never the whole file.
#ifndef STRATASIM_REPORT_TRACE_EXCERPT_H_
#define STRATASIM_REPORT_TRACE_EXCERPT_H_

#include <cstddef>
#include <string>
#include <vector>

namespace stratasim {

struct TraceBar {
  int row = 0;         // index into TraceExcerpt::rows
  double start_s = 0;  // from TraceExcerpt::start_s
  double end_s = 0;    // from TraceExcerpt::start_s
  std::string kind;    // "compute", or a communication's category ("dp", "tp"...) or cat
  std::string name;    // the task's name
};

struct TraceExcerpt {
  int iteration = -1;  // the iteration shown: the last one the chosen GPUs ran; -1 when none
  double start_s = 0;  // its first task's start, over the chosen GPUs (absolute)
  double end_s = 0;    // its last task's end (absolute)
  std::vector<std::string> rows;  // "GPU 3 · compute", GPU then stream order
  std::vector<TraceBar> bars;     // in row, then start order
  bool truncated = false;         // more than max_bars: the earliest max_bars kept
};

// Reads `path` (a trace as `stratasim run` writes it). Throws stratasim::Error naming the file
// and line when a line that holds an event is not JSON, or an event lacks ts/dur/args.iteration.
TraceExcerpt ReadTraceExcerpt(const std::string& path, const std::vector<int>& gpus,
                              size_t max_bars);

// The GPUs the timeline shows when none are chosen: up to four spread over the ranks (the
// first two, the middle one and the last), which in the usual rank orders fall in different
// pipeline stages and servers.
std::vector<int> DefaultTimelineGpus(int num_gpus);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_TRACE_EXCERPT_H_
