#include "cli/collective_sweep.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/units.h"
#include "sim/executor.h"

namespace stratasim {

double BusBandwidthFactor(CollectiveKind kind, int n) {
  if (n <= 1) return 1;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      return 1;
    default:
      return static_cast<double>(n - 1) / n;
  }
}

double ParseSweepSize(const std::string& text) {
  // Digits alone are read exactly up to 2^63 (std::stod would round 2^63 - 1 up to 2^63).
  if (!text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
      })) {
    if (text.size() > 18) return 1e19;  // past any bound, refused by the caller
    return static_cast<double>(std::stoll(text));
  }
  if (!text.empty()) {
    const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
    const double scale = last == 'K'   ? 1024.0
                         : last == 'M' ? 1048576.0
                         : last == 'G' ? 1073741824.0
                                       : 0;
    if (scale > 0) return ParseBytes(text.substr(0, text.size() - 1)) * scale;
  }
  return ParseBytes(text);
}

namespace {

// One collective over `ranks` (all of them, in order); returns its member tasks.
std::vector<TaskId> AddCollectiveAt(TaskGraph& g, const CollectiveSweep& sweep,
                                    const std::vector<int>& ranks, double bytes, int stream) {
  Collective c;
  c.kind = sweep.kind;
  c.ranks = ranks;
  c.bytes = bytes;
  c.dtype = sweep.dtype;
  c.root = sweep.root;
  Task member;
  member.stream = stream;
  member.name = std::string(ToString(sweep.kind)) + " " + FormatBytes(bytes);
  member.phase = Phase::kCommunication;
  return g.AddCollective(c, member);
}

// nccl-tests' sendrecv_perf (src/sendrecv.cu): inside one ncclGroupStart/ncclGroupEnd, rank r
// calls ncclSend to (r+1) % n and ncclRecv from (r-1+n) % n. Each send is one point-to-point
// transfer (TaskGraph::AddTransfer) that the executor runs, once both ends are ready, as a flow
// over the platform's route between the two GPUs. A rank's send and receive sit on two streams
// so that neither waits for the other (inside one NCCL group they do not): on one stream,
// each rank's send would queue behind its receive (or the other way round) and the n
// transfers would run one after another around the ring instead of at once. Returns the send
// and receive tasks.
std::vector<TaskId> AddSendRecvAt(TaskGraph& g, int n, double bytes, int send_stream,
                                  int recv_stream) {
  std::vector<TaskId> ids;
  for (int r = 0; r < n; ++r) {
    const int to = (r + 1) % n;
    Task send, recv;
    send.stream = send_stream;
    recv.stream = recv_stream;
    send.phase = recv.phase = Phase::kCommunication;
    send.name = "send " + FormatBytes(bytes) + " to " + std::to_string(to);
    recv.name = "recv " + FormatBytes(bytes) + " from " + std::to_string(r);
    const auto [s, v] = g.AddTransfer(r, to, bytes, send, recv);
    ids.push_back(s);
    ids.push_back(v);
  }
  return ids;
}

}  // namespace

std::string SweepOpName(const CollectiveSweep& sweep) {
  return sweep.op == SweepOp::kSendRecv ? "sendrecv" : std::string(ToString(sweep.kind));
}

double SweepUnit(const CollectiveSweep& sweep, int n) {
  // Whole elements, and for the kinds that split the buffer evenly, a multiple of n of them.
  const bool split = sweep.op != SweepOp::kSendRecv && sweep.kind != CollectiveKind::kBroadcast &&
                     sweep.kind != CollectiveKind::kReduce &&
                     sweep.kind != CollectiveKind::kAllReduce;
  return BytesPerElement(sweep.dtype) * (split ? n : 1);
}

std::vector<double> SweepSizes(const Scenario& s, const CollectiveSweep& sweep) {
  const double unit = SweepUnit(sweep, sweep.gpus > 0 ? sweep.gpus : s.cluster.NumGpus());
  std::vector<double> sizes;
  for (double b = sweep.min_bytes; b <= sweep.max_bytes * (1 + 1e-12); b *= sweep.factor) {
    // Rounded down, as nccl-tests does; a size that rounds to nothing or to the previous row's
    // is not a new row, and no row exceeds -e.
    const double bytes = std::floor(b / unit) * unit;
    if (bytes < unit || (!sizes.empty() && bytes <= sizes.back())) continue;
    sizes.push_back(bytes);
  }
  return sizes;
}

void CheckCollectiveSweep(const Scenario& s, const CollectiveSweep& sweep) {
  const int n = sweep.gpus > 0 ? sweep.gpus : s.cluster.NumGpus();
  const bool sendrecv = sweep.op == SweepOp::kSendRecv;
  if (n > s.cluster.NumGpus()) {
    throw Error("--gpus " + std::to_string(n) + " is more than the cluster's " +
                std::to_string(s.cluster.NumGpus()) + " GPUs");
  }
  if (!sendrecv && sweep.kind == CollectiveKind::kAllToAllV) {
    throw Error("all_to_all_v needs a size matrix; sweep all_to_all instead");
  }
  if (sweep.min_bytes <= 0 || sweep.max_bytes < sweep.min_bytes || !(sweep.factor > 1) ||
      !std::isfinite(sweep.factor)) {
    throw Error("a sweep needs 0 < -b <= -e and a finite -f > 1");
  }
  // Sizes are exact in a double up to 2^53; 1 TiB is past any real collective buffer.
  if (sweep.max_bytes > kMaxSweepBytes) {
    char buf[120];
    std::snprintf(buf, sizeof buf, "-e %.0f: at most 1T (1099511627776 bytes)", sweep.max_bytes);
    throw Error(buf);
  }
  if (std::log(sweep.max_bytes / sweep.min_bytes) / std::log(sweep.factor) >= kMaxSweepRows) {
    throw Error("-b, -e and -f give more than " + std::to_string(kMaxSweepRows) +
                " sizes; raise -f or narrow [-b, -e]");
  }
  if (sendrecv && n < 2) {
    throw Error("sendrecv needs at least 2 GPUs (a rank sending to itself is a local copy)");
  }
  if (!sendrecv && (sweep.root < 0 || sweep.root >= n)) {
    throw Error("--root must be one of the swept ranks");
  }
  if (SweepSizes(s, sweep).empty()) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "no size in [-b, -e] holds a whole element per rank: %s on %d GPUs of %s "
                  "moves multiples of %.0f bytes",
                  SweepOpName(sweep).c_str(), n, std::string(ToString(sweep.dtype)).c_str(),
                  SweepUnit(sweep, n));
    throw Error(buf);
  }
}

std::vector<SweepRow> RunCollectiveSweep(const Scenario& s, const CollectiveSweep& sweep) {
  CheckCollectiveSweep(s, sweep);
  const int n = sweep.gpus > 0 ? sweep.gpus : s.cluster.NumGpus();
  const bool sendrecv = sweep.op == SweepOp::kSendRecv;

  TaskGraph g(n);
  const int stream = g.Stream(sendrecv ? "send" : "comm");
  const int recv_stream = sendrecv ? g.Stream("recv") : stream;
  std::vector<int> ranks(n);
  for (int r = 0; r < n; ++r) ranks[r] = r;
  const std::vector<double> sizes = SweepSizes(s, sweep);
  std::vector<TaskId> barriers;
  const double elem = BytesPerElement(sweep.dtype);
  TaskId barrier = -1;
  for (double bytes : sizes) {
    const std::vector<TaskId> ids = sendrecv ? AddSendRecvAt(g, n, bytes, stream, recv_stream)
                                             : AddCollectiveAt(g, sweep, ranks, bytes, stream);
    if (barrier >= 0) {
      for (TaskId id : ids) g.AddDep(id, barrier);
    }
    // A zero-time event after every member: the next size starts when this one ended
    // everywhere, as nccl-tests times each size on its own.
    Task sync;
    sync.kind = TaskKind::kMemory;
    sync.stream = stream;
    sync.name = "barrier";
    sync.deps = ids;
    barrier = g.Add(sync);
    barriers.push_back(barrier);
  }
  const ExecutionTrace t = sim::Simulate(g, s.cluster, s.simulation);
  std::vector<SweepRow> rows;
  double previous = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    SweepRow row;
    row.bytes = sizes[i];
    row.count = sizes[i] / elem;
    const double end = t.records[barriers[i]].end_s;
    row.time_s = end - previous;
    previous = end;
    row.algbw_Bps = row.time_s > 0 ? row.bytes / row.time_s : 0;
    // nccl-tests' sendrecv: busbw = algbw (factor 1, src/sendrecv.cu SendRecvGetBw).
    row.busbw_Bps = row.algbw_Bps * (sendrecv ? 1 : BusBandwidthFactor(sweep.kind, n));
    if (sendrecv) {
      row.algorithm = "p2p";
    } else if (i < t.collective_algorithms.size()) {
      row.algorithm = t.collective_algorithms[i];
    }
    rows.push_back(row);
  }
  return rows;
}

std::string FormatSweepTable(const Scenario& s, const CollectiveSweep& sweep,
                             const std::vector<SweepRow>& rows) {
  const int n = sweep.gpus > 0 ? sweep.gpus : s.cluster.NumGpus();
  std::string out;
  char line[256];
  // A sendrecv's transfers are flows over their routes at every fidelity.
  const std::string how = sweep.op == SweepOp::kSendRecv
                              ? std::string("point-to-point flows")
                              : std::string(ToString(s.simulation.fidelity)) + " fidelity";
  std::snprintf(line, sizeof line, "# %s on %d GPUs of %s, %s (simulated)\n",
                SweepOpName(sweep).c_str(), n, s.name.c_str(), how.c_str());
  out += line;
  std::snprintf(line, sizeof line, "#%12s %12s %6s %6s %12s %8s %8s  %s\n", "size", "count", "type",
                "root", "time", "algbw", "busbw", "algorithm");
  out += line;
  std::snprintf(line, sizeof line, "#%12s %12s %6s %6s %12s %8s %8s\n", "(B)", "(elements)", "", "",
                "(us)", "(GB/s)", "(GB/s)");
  out += line;
  const bool rooted =
      sweep.op == SweepOp::kCollective &&
      (sweep.kind == CollectiveKind::kBroadcast || sweep.kind == CollectiveKind::kReduce ||
       sweep.kind == CollectiveKind::kGather || sweep.kind == CollectiveKind::kScatter);
  for (const SweepRow& r : rows) {
    std::snprintf(line, sizeof line, " %12.0f %12.0f %6s %6d %12.2f %8.2f %8.2f  %s\n", r.bytes,
                  r.count, std::string(ToString(sweep.dtype)).c_str(), rooted ? sweep.root : -1,
                  r.time_s * 1e6, r.algbw_Bps / 1e9, r.busbw_Bps / 1e9, r.algorithm.c_str());
    out += line;
  }
  return out;
}

std::string SweepToJson(const Scenario& s, const CollectiveSweep& sweep,
                        const std::vector<SweepRow>& rows) {
  nlohmann::ordered_json j;
  j["format"] = "stratasim-collective-sweep";
  j["version"] = 1;
  j["scenario"] = s.name;
  j["collective"] = SweepOpName(sweep);
  j["dtype"] = ToString(sweep.dtype);
  j["gpus"] = sweep.gpus > 0 ? sweep.gpus : s.cluster.NumGpus();
  j["fidelity"] = ToString(s.simulation.fidelity);
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const SweepRow& r : rows) {
    arr.push_back({{"bytes", r.bytes},
                   {"count", r.count},
                   {"time_s", r.time_s},
                   {"algbw_Bps", r.algbw_Bps},
                   {"busbw_Bps", r.busbw_Bps},
                   {"algorithm", r.algorithm}});
  }
  j["rows"] = std::move(arr);
  return j.dump(2) + "\n";
}

}  // namespace stratasim
