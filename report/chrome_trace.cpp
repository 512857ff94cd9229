#include "report/chrome_trace.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <vector>

#include "core/error.h"

namespace stratasim {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Times are rounded to whole nanoseconds before converting to microseconds: k / 1000.0 is
// the double nearest to the decimal, so it prints with at most three decimals, and a task's
// end (ts + dur) is computed from the same rounded values as the next task's start, so that
// back-to-back tasks on a stream do not overlap by a rounding error (Perfetto would nest them).
std::int64_t Nanoseconds(double seconds) { return std::llround(seconds * 1e9); }
double Microseconds(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// Each event is built and serialised on its own rather than as one big document: a trace of a
// large plan has millions of tasks, and a JSON tree of them would take gigabytes. Task names
// come from models and users; bad UTF-8 is replaced rather than failing.
std::string Dump(const Json& event) {
  return event.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json Metadata(const char* name, int pid, int tid, Json args) {
  Json e;
  e["name"] = name;
  e["ph"] = "M";
  e["pid"] = pid;
  e["tid"] = tid;
  e["args"] = std::move(args);
  return e;
}

Json TaskArgs(const Task& task, const TraceRecord& rec, const Collective* c) {
  Json args;
  args["iteration"] = task.iteration;
  args["phase"] = ToString(task.phase);
  if (!task.category.empty()) args["category"] = task.category.str();
  if (task.kind == TaskKind::kCompute) args["op"] = ToString(task.op);
  if (task.flops != 0) args["flops"] = task.flops;
  double bytes = task.bytes;
  if (task.kind == TaskKind::kCollective && c != nullptr) {
    // A member task carries no size of its own; the collective's buffer is what it moves.
    if (bytes == 0) bytes = c->bytes;
    args["collective"] = ToString(c->kind);
    args["group_size"] = c->ranks.size();
    args["algorithm"] = c->algorithm;
  }
  if (bytes != 0) args["bytes"] = bytes;
  if (task.kind == TaskKind::kSend || task.kind == TaskKind::kRecv) args["peer"] = task.peer;
  if (task.kind == TaskKind::kCopy) args["direction"] = ToString(task.copy);
  bool communicates = task.kind == TaskKind::kCollective || task.kind == TaskKind::kSend ||
                      task.kind == TaskKind::kRecv;
  std::int64_t wait_ns = Nanoseconds(rec.peers_joined_s) - Nanoseconds(rec.start_s);
  if (communicates && wait_ns > 0) args["wait_us"] = Microseconds(wait_ns);
  return args;
}

Json CompleteEvent(const Task& task, const TraceRecord& rec, const Collective* c) {
  std::int64_t start_ns = Nanoseconds(rec.start_s);
  std::int64_t end_ns = std::max(start_ns, Nanoseconds(rec.end_s));
  Json e;
  e["name"] = task.name.str();
  e["cat"] = ToString(task.kind);
  e["ph"] = "X";
  e["pid"] = rec.rank;
  e["tid"] = rec.stream;
  e["ts"] = Microseconds(start_ns);
  e["dur"] = Microseconds(end_ns - start_ns);
  e["args"] = TaskArgs(task, rec, c);
  return e;
}

Json CounterEvent(int rank, const TraceRecord& rec, double allocated_bytes) {
  Json e;
  e["name"] = "memory";
  e["ph"] = "C";
  e["pid"] = rank;
  e["ts"] = Microseconds(Nanoseconds(rec.start_s));
  Json args;
  args["allocated_GiB"] = allocated_bytes / kGiB;
  e["args"] = std::move(args);
  return e;
}

void CheckRecord(const TaskGraph& g, const TraceRecord& rec) {
  if (rec.task < 0 || static_cast<size_t>(rec.task) >= g.tasks().size()) {
    throw Error("trace record for task " + std::to_string(rec.task) + ": the graph has " +
                std::to_string(g.tasks().size()) + " tasks");
  }
  if (rec.rank < 0 || rec.rank >= g.num_ranks()) {
    throw Error("trace record for task " + std::to_string(rec.task) + ": rank " +
                std::to_string(rec.rank) + " is not in the graph's " +
                std::to_string(g.num_ranks()) + " ranks");
  }
  if (rec.stream < 0 || static_cast<size_t>(rec.stream) >= g.streams().size()) {
    throw Error("trace record for task " + std::to_string(rec.task) + ": stream " +
                std::to_string(rec.stream) + " is not one of the graph's streams");
  }
}

}  // namespace

std::string ChromeTraceFileName(const std::string& strategy, const ChromeTraceFileOptions& o) {
  return strategy + (o.gzip ? ".trace.json.gz" : ".trace.json");
}

std::vector<std::string> LinkCounterEvents(const LinkUsage& usage, int pid) {
  std::vector<std::string> out;
  if (usage.edges_s.size() < 2 || usage.links.empty()) return out;
  for (const LinkSeries& link : usage.links) {
    const std::string name = link.label.empty() ? link.name : link.label;
    const char* key = link.bandwidth_Bps > 0 ? "utilisation_pct" : "GBps";
    auto event = [&](double at_s, double value) {
      Json e;
      e["name"] = name;
      e["ph"] = "C";
      e["pid"] = pid;
      e["ts"] = Microseconds(Nanoseconds(at_s));
      e["args"] = Json{{key, value}};
      return Dump(e);
    };
    // A counter holds its value until the next sample: an interval at the rate of the one
    // before (idle stretches, mostly) adds nothing but bytes to the file.
    double last = -1;
    for (size_t i = 0; i + 1 < usage.edges_s.size() && i < link.bytes_per_interval.size(); ++i) {
      const double span_s = usage.edges_s[i + 1] - usage.edges_s[i];
      const double rate_Bps = span_s > 0 ? link.bytes_per_interval[i] / span_s : 0;
      const double value =
          link.bandwidth_Bps > 0 ? rate_Bps / link.bandwidth_Bps * 100 : rate_Bps / 1e9;
      if (value == last) continue;
      out.push_back(event(usage.edges_s[i], value));
      last = value;
    }
    if (last != 0) out.push_back(event(usage.edges_s.back(), 0));
  }
  Json args{{"name", "Links"}};
  out.push_back(Dump(Metadata("process_name", pid, 0, args)));
  // Above the GPUs: the links say why the GPUs below wait.
  out.push_back(Dump(Metadata("process_sort_index", pid, 0, Json{{"sort_index", -1}})));
  return out;
}

ChromeTraceWriter::ChromeTraceWriter(std::function<bool(const std::string&)> write, int num_ranks,
                                     const std::vector<int>& gpus)
    : write_(std::move(write)),
      num_ranks_(num_ranks),
      allocated_(static_cast<size_t>(num_ranks), 0) {
  if (!gpus.empty()) {
    keep_.assign(static_cast<size_t>(num_ranks), false);
    // The command line checks the list against the cluster; a plan of fewer ranks than the
    // cluster has GPUs simply has none of the others to write.
    for (int r : gpus) {
      if (r >= 0 && r < num_ranks) keep_[static_cast<size_t>(r)] = true;
    }
  }
  buffer_ = "{\"traceEvents\":[";
}

bool ChromeTraceWriter::Kept(int rank) const {
  return keep_.empty() || keep_[static_cast<size_t>(rank)];
}

void ChromeTraceWriter::Put(const std::string& event) {
  if (!first_) buffer_ += ",\n";
  first_ = false;
  buffer_ += event;
  if (buffer_.size() >= (1u << 20)) {
    ok_ = ok_ && write_(buffer_);
    buffer_.clear();
  }
}

void ChromeTraceWriter::Add(const Task& task, const TraceRecord& rec, const Collective* c) {
  if (!Kept(rec.rank)) return;
  if (task.kind != TaskKind::kMemory) {
    rank_streams_.insert({rec.rank, rec.stream});
    Put(Dump(CompleteEvent(task, rec, c)));
    return;
  }
  double& allocated = allocated_[static_cast<size_t>(rec.rank)];
  allocated += task.memory_delta_bytes;
  Put(Dump(CounterEvent(rec.rank, rec, allocated)));
}

bool ChromeTraceWriter::Finish(const std::vector<std::string>& streams, const std::string& executor,
                               double makespan_s, const LinkUsage* links) {
  if (links != nullptr) {
    for (const std::string& e : LinkCounterEvents(*links, num_ranks_)) Put(e);
  }
  // Only the streams that ran a task on a rank get a thread there, so that a rank does not
  // show empty rows for streams other ranks use.
  for (int rank = 0; rank < num_ranks_; ++rank) {
    if (!Kept(rank)) continue;
    Put(Dump(Metadata("process_name", rank, 0, Json{{"name", "GPU " + std::to_string(rank)}})));
    // Without a sort index viewers order processes by name, which puts "GPU 10" before "GPU 2".
    Put(Dump(Metadata("process_sort_index", rank, 0, Json{{"sort_index", rank}})));
    for (auto it = rank_streams_.lower_bound({rank, 0});
         it != rank_streams_.end() && it->first == rank; ++it) {
      Put(Dump(Metadata("thread_name", rank, it->second,
                        Json{{"name", streams.at(static_cast<size_t>(it->second))}})));
      Put(Dump(Metadata("thread_sort_index", rank, it->second, Json{{"sort_index", it->second}})));
    }
  }
  Json other;
  other["executor"] = executor;
  other["makespan_s"] = makespan_s;
  buffer_ += "],\n\"displayTimeUnit\":\"ms\",\"otherData\":" + other.dump() + "}\n";
  ok_ = ok_ && write_(buffer_);
  buffer_.clear();
  return ok_;
}

std::string ChromeTraceJson(const TaskGraph& g, const ExecutionTrace& t,
                            const std::vector<int>& gpus) {
  // Sorting pointers to records keeps the trace itself untouched and the order independent
  // of the order in which an executor happened to record tasks.
  std::vector<const TraceRecord*> records;
  records.reserve(t.records.size());
  for (const TraceRecord& rec : t.records) {
    CheckRecord(g, rec);
    records.push_back(&rec);
  }
  // Memory events sort after every task of their rank (they are emitted as counters there).
  auto key = [&g](const TraceRecord* r) {
    bool memory = g.task(r->task).kind == TaskKind::kMemory;
    return std::make_tuple(r->rank, memory, memory ? 0 : r->stream, r->start_s, r->task);
  };
  std::sort(records.begin(), records.end(),
            [&key](const TraceRecord* a, const TraceRecord* b) { return key(a) < key(b); });
  std::string out;
  ChromeTraceWriter writer(
      [&out](const std::string& text) {
        out += text;
        return true;
      },
      g.num_ranks(), gpus);
  for (const TraceRecord* r : records) {
    const Task& task = g.task(r->task);
    writer.Add(task, *r,
               task.kind == TaskKind::kCollective ? &g.collective(task.collective) : nullptr);
  }
  writer.Finish(g.streams(), t.executor, t.makespan_s, &t.link_usage);
  return out;
}

}  // namespace stratasim
