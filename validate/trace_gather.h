// The traces of a multi-process `validate` run, from every process to rank 0 (docs/validate.md,
// "On a cluster"). Process p runs the plan's rank p (RunOptions::processes) and sends rank 0
// what it measured, or its error with what it measured before it; rank 0 merges them into one
// trace of the whole graph, which it simulates and compares as a single-process run's.
#ifndef STRATASIM_VALIDATE_TRACE_GATHER_H_
#define STRATASIM_VALIDATE_TRACE_GATHER_H_

#include <optional>
#include <string>
#include <vector>

#include "core/task_graph.h"
#include "core/trace.h"

namespace stratasim::validate {

// What one process ran: its rank's records of `trace` (the others are dropped before sending),
// and, when its run failed, the BackendError's kind ("out of memory", backend.h's ToString) and
// message.
struct ProcessOutcome {
  int rank = 0;
  bool ok = true;
  std::string error_kind;
  std::string error;
  ExecutionTrace trace;
};

// A JSON document holding `o` with only the records of rank o.rank. DecodeOutcome throws
// stratasim::Error on a document that is not one.
std::string EncodeOutcome(const ProcessOutcome& o);
ProcessOutcome DecodeOutcome(const std::string& text);

struct MergedRun {
  // One record per task of the graph: rank r's from process r, -1 times where it sent none.
  ExecutionTrace trace;
  // Every process answered and none failed.
  bool complete = false;
  // One line per failed or silent process, in rank order: "rank 1: out of memory: ...",
  // "rank 1 sent no trace within 30 s: it died or hangs".
  std::vector<std::string> errors;
};

// Merges the processes' outcomes (by rank, as ProcessGroup::GatherToRoot gives them: nullopt
// for a process that sent nothing within `timeout_s`). A collective's or a transfer's
// peers_joined_s becomes the latest of its members' own join times (each process knows only
// its own), kept within each record's [start_s, end_s] against residual clock offsets.
// Throws stratasim::Error when there are not g.num_ranks() outcomes or one is malformed.
MergedRun MergeOutcomes(const TaskGraph& g, const std::vector<std::optional<std::string>>& gathered,
                        double timeout_s);

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_TRACE_GATHER_H_
