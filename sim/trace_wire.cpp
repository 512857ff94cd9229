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
constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'C', 'E', '0', '2'};
static_assert(std::is_trivially_copyable_v<TraceRecord>);

using Out = WireOut;
using In = WireIn;

}  // namespace

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
