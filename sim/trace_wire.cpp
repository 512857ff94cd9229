#include "sim/trace_wire.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"

namespace stratasim::sim {
namespace {

// "STRACE" and a format number: a stream from another build is refused, not misread.
constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'C', 'E', '0', '3'};
static_assert(std::is_trivially_copyable_v<TraceRecord>);

using Out = WireOut;
using In = WireIn;

void PutDoubles(Out& o, const std::vector<double>& v) {
  o.Pod(static_cast<std::uint64_t>(v.size()));
  o.Bytes(v.data(), v.size() * sizeof(double));
}

std::vector<double> GetDoubles(In& in, const char* what) {
  std::vector<double> v(static_cast<size_t>(in.Count(what)));
  in.Need(v.data(), v.size() * sizeof(double), what);
  return v;
}

}  // namespace

void PutLinkUsage(WireOut& o, const LinkUsage& u) {
  PutDoubles(o, u.edges_s);
  o.Pod(static_cast<std::uint64_t>(u.links.size()));
  for (const LinkSeries& l : u.links) {
    o.Str(l.name);
    o.Str(l.label);
    o.Pod(l.bandwidth_Bps);
    o.Pod(l.bytes);
    PutDoubles(o, l.bytes_per_interval);
  }
  o.Pod(static_cast<std::int64_t>(u.links_used));
  o.Pod(u.bytes_total);
}

LinkUsage GetLinkUsage(WireIn& in) {
  LinkUsage u;
  // At most kMaxLinkIntervals + 1 bounds and kMaxLinkSeries links (core/link_usage.h).
  u.edges_s = GetDoubles(in, "link usage bounds");
  if (u.edges_s.size() > static_cast<size_t>(kMaxLinkIntervals) + 1) {
    throw Error("simulation result: " + std::to_string(u.edges_s.size()) +
                " link usage bounds, more than " + std::to_string(kMaxLinkIntervals + 1));
  }
  const std::uint64_t links = in.Count("link series");
  if (links > static_cast<std::uint64_t>(kMaxLinkSeries)) {
    throw Error("simulation result: " + std::to_string(links) + " link series, more than " +
                std::to_string(kMaxLinkSeries));
  }
  for (std::uint64_t i = 0; i < links; ++i) {
    LinkSeries l;
    l.name = in.Str("link name");
    l.label = in.Str("link label");
    l.bandwidth_Bps = in.Pod<double>("link bandwidth");
    l.bytes = in.Pod<double>("link bytes");
    const std::uint64_t n = in.Count("link intervals");
    if (n + 1 != u.edges_s.size()) {
      throw Error("simulation result: link " + l.name + " has " + std::to_string(n) +
                  " intervals, its bounds give " +
                  std::to_string(u.edges_s.empty() ? 0 : u.edges_s.size() - 1));
    }
    l.bytes_per_interval.resize(static_cast<size_t>(n));
    in.Need(l.bytes_per_interval.data(), l.bytes_per_interval.size() * sizeof(double),
            "link intervals");
    u.links.push_back(std::move(l));
  }
  u.links_used = static_cast<int>(in.Pod<std::int64_t>("links used"));
  u.bytes_total = in.Pod<double>("link bytes total");
  return u;
}

bool WriteTraceWire(const ExecutionTrace& t, const WireWrite& write) {
  return WriteTraceWire(
      t, t.records.size(), [&](size_t i) { return t.records[i]; }, write);
}

bool WriteTraceWire(const ExecutionTrace& t, size_t records,
                    const std::function<TraceRecord(size_t)>& record, const WireWrite& write) {
  Out o(write);
  o.Bytes(kMagic, sizeof kMagic);
  o.Str(t.executor);
  o.Pod(static_cast<std::int64_t>(t.num_ranks));
  o.Pod(static_cast<std::uint64_t>(t.streams.size()));
  for (const std::string& s : t.streams) o.Str(s);
  o.Pod(static_cast<std::uint64_t>(t.collective_algorithms.size()));
  for (const std::string& s : t.collective_algorithms) o.Str(s);
  o.Pod(t.makespan_s);
  o.Pod(static_cast<std::int64_t>(t.activities));
  o.Pod(static_cast<std::int64_t>(t.instants));
  o.Pod(static_cast<std::int64_t>(t.fused_tasks));
  PutLinkUsage(o, t.link_usage);
  o.Pod(static_cast<std::uint64_t>(records));
  std::vector<TraceRecord> block;  // written in blocks of 64 Ki records
  block.reserve(std::min<size_t>(records, 1 << 16));
  for (size_t i = 0; i < records && o.ok(); ++i) {
    block.push_back(record(i));
    if (block.size() == block.capacity() || i + 1 == records) {
      o.Bytes(block.data(), block.size() * sizeof(TraceRecord));
      block.clear();
    }
  }
  return o.ok();
}

ExecutionTrace ReadTraceWire(const WireRead& read, unsigned long long max_records) {
  In in(read);
  char magic[sizeof kMagic];
  in.Need(magic, sizeof magic, "its header");
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    throw Error("simulation result: not a trace of this build (bad header)");
  }
  ExecutionTrace t;
  t.executor = in.Str("executor name");
  const auto ranks = in.Pod<std::int64_t>("rank count");
  if (ranks < 0 || ranks > (1 << 30)) {
    throw Error("simulation result: rank count " + std::to_string(ranks) + " out of range");
  }
  t.num_ranks = static_cast<int>(ranks);
  const std::uint64_t streams = in.Count("stream");
  for (std::uint64_t i = 0; i < streams; ++i) t.streams.push_back(in.Str("stream name"));
  const std::uint64_t algorithms = in.Count("collective");
  for (std::uint64_t i = 0; i < algorithms; ++i) {
    t.collective_algorithms.push_back(in.Str("collective algorithm"));
  }
  t.makespan_s = in.Pod<double>("makespan");
  t.activities = in.Pod<std::int64_t>("activity count");
  t.instants = in.Pod<std::int64_t>("instant count");
  t.fused_tasks = in.Pod<std::int64_t>("fused task count");
  t.link_usage = GetLinkUsage(in);
  const std::uint64_t records = in.Count("record");
  if (max_records > 0 && records > max_records) {
    throw Error("simulation result: " + std::to_string(records) + " records for a graph of " +
                std::to_string(max_records) + " tasks");
  }
  // Bounded by the graph the caller holds: allocated once. Read in blocks all the same.
  if (max_records > 0) t.records.reserve(static_cast<size_t>(records));
  constexpr std::uint64_t kBlock = 1 << 16;
  for (std::uint64_t done = 0; done < records;) {
    const std::uint64_t k = records - done < kBlock ? records - done : kBlock;
    t.records.resize(static_cast<size_t>(done + k));
    in.Need(t.records.data() + done, static_cast<size_t>(k) * sizeof(TraceRecord), "records");
    done += k;
  }
  return t;
}

}  // namespace stratasim::sim
