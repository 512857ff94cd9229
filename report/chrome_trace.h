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
// Events are ordered by rank, then stream, start time and task id; counters follow their
// rank's tasks. One event per line, no indentation: traces get large.
//
// Throws stratasim::Error when the trace does not match the graph (a record naming a task,
// rank or stream the graph does not have).
std::string ChromeTraceJson(const TaskGraph& g, const ExecutionTrace& t);

// The same format written as tasks come, in the order they come, for a run that never holds
// its whole graph (docs/scale.md, "Iterations"): a simulation hands tasks over in id order,
// and a rank's memory counter then runs in that order. Process and thread names follow the
// events.
class ChromeTraceWriter {
 public:
  // `write` receives the text piece by piece and returns false when it could not write.
  ChromeTraceWriter(std::function<bool(const std::string&)> write, int num_ranks);
  // `c`: the task's collective (collective members only).
  void Add(const Task& task, const TraceRecord& rec, const Collective* c);
  // Ends the document (`streams`: the graph's stream names); returns false if any write
  // failed.
  bool Finish(const std::vector<std::string>& streams, const std::string& executor,
              double makespan_s);

 private:
  void Put(const std::string& event);

  std::function<bool(const std::string&)> write_;
  int num_ranks_;
  std::set<std::pair<int, int>> rank_streams_;
  std::vector<double> allocated_;
  std::string buffer_;
  bool first_ = true;
  bool ok_ = true;
};

}  // namespace stratasim

#endif  // STRATASIM_REPORT_CHROME_TRACE_H_
