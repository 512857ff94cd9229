#include "validate/fabric_sweep.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/median.h"
#include "core/units.h"
#include "validate/optional_log.h"

namespace stratasim::validate {
namespace {

// Most timed repetitions of one size: enough for a 1 us operation to reach 10 ms.
constexpr int kMaxRepetitions = 1 << 14;

CollectiveKind KindOf(FabricOp op) {
  switch (op) {
    case FabricOp::kAllGather:
      return CollectiveKind::kAllGather;
    case FabricOp::kReduceScatter:
      return CollectiveKind::kReduceScatter;
    case FabricOp::kAllToAll:
      return CollectiveKind::kAllToAll;
    default:
      return CollectiveKind::kAllReduce;
  }
}

// `count` repetitions of `op` over `ranks` in a graph of all the run's ranks; the task ids of
// repetition i are ids[i] (the members, or the send and the receive).
struct Measurement {
  TaskGraph graph;
  std::vector<std::vector<TaskId>> ids;
};

Measurement Build(int world_ranks, FabricOp op, const std::vector<int>& ranks, double bytes,
                  DType dtype, int count) {
  Measurement m{TaskGraph(world_ranks), {}};
  const int stream = m.graph.Stream("fabric");
  for (int i = 0; i < count; ++i) {
    Task t;
    t.stream = stream;
    t.name = std::string(ToString(op));
    t.phase = Phase::kCommunication;
    t.dtype = dtype;
    t.bytes = bytes;
    if (op == FabricOp::kSendRecv) {
      const auto [send, recv] = m.graph.AddTransfer(ranks[0], ranks[1], bytes, t, t);
      m.ids.push_back({send, recv});
      continue;
    }
    Collective c;
    c.kind = KindOf(op);
    c.bytes = bytes;
    c.dtype = dtype;
    c.ranks = ranks;
    m.ids.push_back(m.graph.AddCollective(c, t));
  }
  return m;
}

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

// This process's measured records of the graph: "task start end" lines.
std::string OwnRecords(const ExecutionTrace& t) {
  std::string text;
  for (std::size_t i = 0; i < t.records.size(); ++i) {
    const TraceRecord& r = t.records[i];
    if (r.start_s < 0) continue;
    text += std::to_string(i) + " " + Num(r.start_s) + " " + Num(r.end_s) + "\n";
  }
  return text;
}

// The times of the timed repetitions [warmup, count), from every process's records.
std::vector<double> Durations(const Measurement& m, int warmup,
                              const std::vector<std::optional<std::string>>& records) {
  std::vector<double> start(m.graph.tasks().size(), -1), end(m.graph.tasks().size(), -1);
  for (std::size_t p = 0; p < records.size(); ++p) {
    if (!records[p]) {
      throw ProcessGroupError(static_cast<int>(p), "calibrate --fabric: rank " + std::to_string(p) +
                                                       " sent no measurements (dead or hung)");
    }
    std::istringstream in(*records[p]);
    std::size_t id;
    double s, e;
    while (in >> id >> s >> e) {
      if (id < start.size()) {
        start[id] = s;
        end[id] = e;
      }
    }
  }
  std::vector<double> durations;
  for (std::size_t i = static_cast<std::size_t>(warmup); i < m.ids.size(); ++i) {
    double last_start = -1, last_end = -1;
    for (TaskId id : m.ids[i]) {
      if (start[id] < 0) {
        const int rank = m.graph.tasks()[id].rank;
        throw ProcessGroupError(rank, "calibrate --fabric: rank " + std::to_string(rank) +
                                          " did not measure task " + std::to_string(id));
      }
      last_start = std::max(last_start, start[id]);
      last_end = std::max(last_end, end[id]);
    }
    durations.push_back(std::max(0.0, last_end - last_start));
  }
  return durations;
}

std::string Join(const std::vector<double>& v) {
  std::string s;
  for (double d : v) s += Num(d) + " ";
  return s;
}

std::vector<double> Split(const std::string& text) {
  std::vector<double> v;
  std::istringstream in(text);
  double d;
  while (in >> d) v.push_back(d);
  return v;
}

}  // namespace

std::vector<FabricClassGroup> FabricClassGroups(const std::vector<std::string>& hosts,
                                                std::vector<std::string>* unmeasured) {
  std::vector<FabricClassGroup> groups;
  if (hosts.empty()) return groups;
  FabricClassGroup intra{"intra", {}};
  FabricClassGroup inter{"inter", {}};
  std::map<std::string, int> first_of_host;
  for (int r = 0; r < static_cast<int>(hosts.size()); ++r) {
    if (hosts[r] == hosts[0]) intra.ranks.push_back(r);
    if (first_of_host.emplace(hosts[r], r).second) inter.ranks.push_back(r);
  }
  if (intra.ranks.size() >= 2) {
    groups.push_back(intra);
  } else if (unmeasured) {
    unmeasured->push_back("intra: one process on " + hosts[0] +
                          " (run two or more processes per server)");
  }
  if (inter.ranks.size() >= 2) {
    groups.push_back(inter);
  } else if (unmeasured) {
    unmeasured->push_back("inter: every process runs on " + hosts[0] +
                          " (run on two or more servers)");
  }
  return groups;
}

FabricMeasurements MeasureFabric(const FabricRunner& run, ProcessGroup* processes, int world_ranks,
                                 const FabricSweep& sweep, const std::string& protocol,
                                 std::ostream* out) {
  OptionalLog log{out};
  std::vector<std::string> hosts;
  if (processes) {
    hosts = processes->AllGather(processes->host());
    world_ranks = processes->size();
  } else {
    hosts.assign(static_cast<std::size_t>(std::max(0, world_ranks)), "localhost");
  }
  FabricMeasurements result;
  const std::vector<FabricClassGroup> groups = FabricClassGroups(hosts, &result.unmeasured);
  const int warmup = std::max(0, sweep.bench.warmup);
  const double element = BytesPerElement(sweep.dtype);
  for (const FabricClassGroup& group : groups) {
    result.measured.push_back(group.link_class);
    const int n = static_cast<int>(group.ranks.size());
    log << "fabric " << group.link_class << " (" << n << " processes: ranks";
    for (int r : group.ranks) log << " " << r;
    log << "), protocol " << protocol << "\n";
    for (FabricOp op : sweep.ops) {
      const int members = op == FabricOp::kSendRecv ? 2 : n;
      const std::vector<int> ranks(group.ranks.begin(), group.ranks.begin() + members);
      log << "  " << ToString(op) << " x" << members << ":\n"
          << "    size          time         algbw         busbw\n";
      // A block per member of at least one element (all-to-all, reduce-scatter, all-gather).
      const double smallest =
          op == FabricOp::kSendRecv || op == FabricOp::kAllReduce ? element : element * members;
      int reps = std::max(1, sweep.bench.repetitions);
      for (double bytes = sweep.min_bytes; bytes <= sweep.max_bytes; bytes *= 2) {
        if (bytes < smallest) continue;
        std::vector<double> durations;
        for (;;) {
          const Measurement m = Build(world_ranks, op, ranks, bytes, sweep.dtype, warmup + reps);
          const ExecutionTrace trace = run(m.graph);
          std::string text;
          if (processes) {
            // Rank 0's verdict, times or an error naming a rank, reaches every process, so
            // that all of them stop together instead of waiting for rank 0 until timeout.
            const auto gathered = processes->GatherToRoot(OwnRecords(trace));
            if (processes->rank() == 0) {
              try {
                text = Join(Durations(m, warmup, gathered));
              } catch (const ProcessGroupError& e) {
                text = "error " + std::to_string(e.peer()) + " " + e.what();
              }
            }
            processes->Broadcast(&text, 0);
            if (text.rfind("error ", 0) == 0) {
              std::istringstream in(text.substr(6));
              int peer = -1;
              in >> peer;
              std::string message;
              std::getline(in >> std::ws, message, '\0');
              throw ProcessGroupError(peer, message);
            }
          } else {
            text = Join(Durations(m, warmup, {OwnRecords(trace)}));
          }
          durations = Split(text);
          double total = 0;
          for (double d : durations) total += d;
          if (total >= sweep.bench.min_total_s || reps >= kMaxRepetitions) break;
          const double per = std::max(total / std::max<std::size_t>(1, durations.size()), 1e-7);
          reps =
              std::min(kMaxRepetitions,
                       std::max(2 * reps, static_cast<int>(1.2 * sweep.bench.min_total_s / per)));
        }
        for (double d : durations) {
          result.samples.push_back({group.link_class, protocol, op, members, bytes, d});
        }
        const double median = Median(durations);
        const double algbw = median > 0 ? bytes / median : 0;
        char line[160];
        std::snprintf(line, sizeof(line), "    %-12s  %-11s  %-12s  %-12s\n",
                      FormatBytes(bytes).c_str(), FormatSeconds(median).c_str(),
                      FormatBandwidth(algbw).c_str(),
                      FormatBandwidth(algbw * BusBandwidthFactor(op, members)).c_str());
        log << line;
        // The next size takes up to twice as long: start it with the repetitions that reach
        // min_total_s then, so that most sizes need one run.
        reps =
            std::clamp(static_cast<int>(1.2 * sweep.bench.min_total_s / std::max(2 * median, 1e-7)),
                       std::max(1, sweep.bench.repetitions), kMaxRepetitions);
        if (median > sweep.max_op_s) {
          log << "    (stopped: one operation takes over " << FormatSeconds(sweep.max_op_s)
              << ")\n";
          break;
        }
      }
    }
  }
  for (const std::string& u : result.unmeasured) log << "fabric " << u << ": not measured\n";
  return result;
}

}  // namespace stratasim::validate
