#include "validate/trace_gather.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "core/error.h"

namespace stratasim::validate {
namespace {

using Json = nlohmann::ordered_json;

// "30 s", "2.5 s": the deadline as the user gave it.
std::string Seconds(double s) {
  std::ostringstream out;
  out << s << " s";
  return out.str();
}

bool Measured(const TraceRecord& r) { return r.start_s >= 0 && r.end_s >= 0; }

// The members of every collective and transfer, to set their common peers_joined_s.
std::vector<std::vector<TaskId>> Groups(const TaskGraph& g) {
  std::vector<std::vector<TaskId>> groups;
  for (const Collective& c : g.collectives()) groups.push_back(c.members);
  // A transfer's two ends share (source rank, destination rank, tag).
  std::map<std::tuple<int, int, int>, std::vector<TaskId>> transfers;
  for (const Task& t : g.tasks()) {
    if (t.kind == TaskKind::kSend) transfers[{t.rank, t.peer, t.tag}].push_back(t.id);
    if (t.kind == TaskKind::kRecv) transfers[{t.peer, t.rank, t.tag}].push_back(t.id);
  }
  for (auto& [key, ends] : transfers) groups.push_back(std::move(ends));
  return groups;
}

}  // namespace

std::string EncodeOutcome(const ProcessOutcome& o) {
  ExecutionTrace mine = o.trace;
  mine.records.clear();
  for (const TraceRecord& r : o.trace.records) {
    if (r.rank == o.rank) mine.records.push_back(r);
  }
  Json j;
  j["format"] = "stratasim-process-outcome";
  j["rank"] = o.rank;
  j["ok"] = o.ok;
  j["error_kind"] = o.error_kind;
  j["error"] = o.error;
  j["trace"] = TraceToJson(mine);
  return j.dump();
}

ProcessOutcome DecodeOutcome(const std::string& text) {
  try {
    const Json j = Json::parse(text);
    if (j.at("format") != "stratasim-process-outcome") {
      throw Error("not a stratasim-process-outcome document");
    }
    ProcessOutcome o;
    o.rank = j.at("rank").get<int>();
    o.ok = j.at("ok").get<bool>();
    o.error_kind = j.at("error_kind").get<std::string>();
    o.error = j.at("error").get<std::string>();
    o.trace = TraceFromJson(j.at("trace").get<std::string>());
    return o;
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("a process's outcome: ") + e.what());
  } catch (const Error& e) {
    throw Error(std::string("a process's outcome: ") + e.what());
  }
}

MergedRun MergeOutcomes(const TaskGraph& g, const std::vector<std::optional<std::string>>& gathered,
                        double timeout_s) {
  if (static_cast<int>(gathered.size()) != g.num_ranks()) {
    throw Error("merging traces: " + std::to_string(gathered.size()) + " processes answered for " +
                std::to_string(g.num_ranks()) + " ranks");
  }
  MergedRun m;
  m.complete = true;
  ExecutionTrace& t = m.trace;
  t.num_ranks = g.num_ranks();
  t.streams = g.streams();
  t.records.resize(g.tasks().size());
  for (const Task& task : g.tasks()) {
    t.records[static_cast<size_t>(task.id)] =
        TraceRecord{task.id, task.rank, task.stream, -1, -1, -1};
  }
  bool have_header = false;
  for (int p = 0; p < static_cast<int>(gathered.size()); ++p) {
    if (!gathered[static_cast<size_t>(p)]) {
      m.complete = false;
      m.errors.push_back("rank " + std::to_string(p) + " sent no trace within " +
                         Seconds(timeout_s) + ": it died or hangs");
      continue;
    }
    const ProcessOutcome o = DecodeOutcome(*gathered[static_cast<size_t>(p)]);
    if (o.rank != p) {
      throw Error("merging traces: process " + std::to_string(p) + " says it ran rank " +
                  std::to_string(o.rank));
    }
    if (!o.ok) {
      m.complete = false;
      m.errors.push_back("rank " + std::to_string(p) + ": " + o.error_kind + ": " + o.error);
    }
    // The lowest answering rank says how collectives ran: every process ran the same
    // algorithms, chosen from the same graph.
    if (!have_header && !o.trace.executor.empty()) {
      t.executor = o.trace.executor;
      t.collective_algorithms = o.trace.collective_algorithms;
      have_header = true;
    }
    for (const TraceRecord& r : o.trace.records) {
      if (r.task < 0 || static_cast<size_t>(r.task) >= t.records.size()) {
        throw Error("merging traces: rank " + std::to_string(p) + " sent a record of task " +
                    std::to_string(r.task) + ", which the graph does not have");
      }
      // A process runs only its own rank's tasks.
      if (g.task(r.task).rank != p || !Measured(r)) continue;
      t.records[static_cast<size_t>(r.task)] = r;
    }
  }
  for (const std::vector<TaskId>& members : Groups(g)) {
    double joined = -1;
    bool all = !members.empty();
    for (TaskId id : members) {
      const TraceRecord& r = t.records[static_cast<size_t>(id)];
      all = all && Measured(r);
      joined = std::max(joined, std::max(r.peers_joined_s, r.start_s));
    }
    if (!all) continue;  // a member unmeasured: each keeps its own join time
    for (TaskId id : members) {
      TraceRecord& r = t.records[static_cast<size_t>(id)];
      r.peers_joined_s = std::clamp(joined, r.start_s, r.end_s);
    }
  }
  t.makespan_s = 0;
  for (const TraceRecord& r : t.records) t.makespan_s = std::max(t.makespan_s, r.end_s);
  return m;
}

}  // namespace stratasim::validate
