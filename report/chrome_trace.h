// An execution trace in the Chrome trace event format, to look at a plan's timeline in
// Perfetto (ui.perfetto.dev) or chrome://tracing.
#ifndef STRATASIM_REPORT_CHROME_TRACE_H_
#define STRATASIM_REPORT_CHROME_TRACE_H_

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/task_graph.h"
#include "core/trace.h"

namespace stratasim {

// Returns {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}:
// - each rank is a process ("pid": rank, named "GPU <rank>") and each stream a thread of it
//   ("tid": stream index, named after the stream);
// - each task but memory events is a complete event ("ph": "X") with "ts" and "dur" in
//   microseconds (rounded to the nanosecond), "name" the task name, "cat" its kind, and args:
//   iteration, phase, category, op, flops, bytes, collective kind and group size, peer,
//   copy direction, and "wait_us", the time a collective or transfer waited for its peers;
// - memory events become a counter ("ph": "C", "name": "memory") per rank whose
//   "allocated_GiB" is the running total of the rank's allocations.
// - `t.link_usage`, when recorded, becomes a process "Links" ("pid": the graph's ranks, so
//   after every GPU's) with one counter per kept link, named after the link's label
//   (LinkCounterEvents);
// Events are ordered by rank, then stream, start time and task id; counters follow their
// rank's tasks, the links' after every rank. One event per line, no indentation: traces get
// large.
//
// `gpus`: the ranks to write; empty writes every rank. The other ranks' tasks, counters and
// names are left out, and so is their size; entries outside [0, ranks) select nothing.
//
// Throws stratasim::Error when the trace does not match the graph (a record naming a task,
// rank or stream the graph does not have).
std::string ChromeTraceJson(const TaskGraph& g, const ExecutionTrace& t,
                            const std::vector<int>& gpus = {});

// How `stratasim run` writes its traces (--trace-gpus, --trace-format).
struct ChromeTraceFileOptions {
  std::vector<int> gpus;  // the ranks to write; empty: all
  bool gzip = false;      // <name>.trace.json.gz (report/gzip_stream.h) instead of .trace.json
};

// "<strategy>.trace.json" or "<strategy>.trace.json.gz".
std::string ChromeTraceFileName(const std::string& strategy, const ChromeTraceFileOptions& o);

// A link's counter track: at each interval's start, the link's utilisation over it
// ("utilisation_pct": bytes / (bandwidth × interval) × 100; "GBps", 10^9 bytes/s, when the
// link's bandwidth is unknown), and a final 0 at the end of the last interval. The process
// `pid` is named "Links" and sorted before the GPUs. One serialised event per element.
std::vector<std::string> LinkCounterEvents(const LinkUsage& usage, int pid);

// The same format written as tasks come, in the order they come, for a run that never holds
// its whole graph (docs/scale.md, "Iterations"): a simulation hands tasks over in id order,
// and a rank's memory counter then runs in that order. Process and thread names follow the
// events.
class ChromeTraceWriter {
 public:
  // `write` receives the text piece by piece and returns false when it could not write.
  // `gpus`: the ranks to write, as ChromeTraceJson's; empty writes every rank.
  ChromeTraceWriter(std::function<bool(const std::string&)> write, int num_ranks,
                    const std::vector<int>& gpus = {});
  // `c`: the task's collective (collective members only).
  void Add(const Task& task, const TraceRecord& rec, const Collective* c);
  // Ends the document (`streams`: the graph's stream names; `links`: the run's link usage, or
  // null, written as ChromeTraceJson writes it); returns false if any write failed.
  bool Finish(const std::vector<std::string>& streams, const std::string& executor,
              double makespan_s, const LinkUsage* links = nullptr);

 private:
  void Put(const std::string& event);
  bool Kept(int rank) const;

  std::function<bool(const std::string&)> write_;
  int num_ranks_;
  std::set<std::pair<int, int>> rank_streams_;
  std::vector<double> allocated_;
  std::vector<bool> keep_;  // per rank; empty: every rank
  std::string buffer_;
  bool first_ = true;
  bool ok_ = true;
};

}  // namespace stratasim

#endif  // STRATASIM_REPORT_CHROME_TRACE_H_
