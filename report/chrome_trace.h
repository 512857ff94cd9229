// An execution trace in the Chrome trace event format, to look at a plan's timeline in
// Perfetto (ui.perfetto.dev) or chrome://tracing.
#ifndef STRATASIM_REPORT_CHROME_TRACE_H_
#define STRATASIM_REPORT_CHROME_TRACE_H_

#include <string>

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

}  // namespace stratasim

#endif  // STRATASIM_REPORT_CHROME_TRACE_H_
