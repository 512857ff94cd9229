// The binary form in which a simulation child process hands its ExecutionTrace back to the
// parent (sim/simulate_isolated.cpp). Records travel as raw fixed-size structs: both ends are
// the same binary, so no byte order or padding question arises, and a trace of millions of
// records costs its own size once on each side rather than a JSON text and a JSON document
// (at 128 GPUs the JSON round trip was about half of a run's CPU time and most of its memory).
//
// The reader trusts nothing: every count is checked against what the sender declared it would
// send and against kMaxWireCount before anything is allocated, and a short or malformed stream
// throws stratasim::Error.
#ifndef STRATASIM_SIM_TRACE_WIRE_H_
#define STRATASIM_SIM_TRACE_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "core/error.h"
#include "core/trace.h"

namespace stratasim::sim {

// Sends `size` bytes; returns false if the other end is gone.
using WireWrite = std::function<bool(const void* data, size_t size)>;
// Receives exactly `size` bytes; returns false at the end of the stream before that.
using WireRead = std::function<bool(void* data, size_t size)>;

// Upper bound on any count in the stream (records, streams, strings' lengths): far above any
// trace that fits in memory, low enough that a corrupt count cannot ask for terabytes.
inline constexpr unsigned long long kMaxWireCount = 1ULL << 34;

// Fixed-size values and strings on a wire, for the trace and for other replies of a child
// (cli/streamed_run.cpp). WireOut remembers whether a write failed; WireIn throws
// stratasim::Error on a short stream and on a count past kMaxWireCount.
class WireOut {
 public:
  explicit WireOut(const WireWrite& w) : w_(w) {}
  template <typename T>
  void Pod(const T& v) {
    ok_ = ok_ && w_(&v, sizeof v);
  }
  void Str(const std::string& s) {
    Pod(static_cast<std::uint64_t>(s.size()));
    if (!s.empty()) ok_ = ok_ && w_(s.data(), s.size());
  }
  void Bytes(const void* p, size_t n) {
    if (n > 0) ok_ = ok_ && w_(p, n);
  }
  bool ok() const { return ok_; }

 private:
  const WireWrite& w_;
  bool ok_ = true;
};

class WireIn {
 public:
  explicit WireIn(const WireRead& r) : r_(r) {}
  template <typename T>
  T Pod(const char* what) {
    T v{};
    Need(&v, sizeof v, what);
    return v;
  }
  std::uint64_t Count(const char* what) {
    const auto n = Pod<std::uint64_t>(what);
    if (n > kMaxWireCount) {
      throw Error(std::string("simulation result: ") + what + " count " + std::to_string(n) +
                  " exceeds the limit of " + std::to_string(kMaxWireCount));
    }
    return n;
  }
  std::string Str(const char* what) {
    const std::uint64_t n = Count(what);
    // Strings here are names (streams, algorithms): a few dozen bytes. Read in pieces so that
    // a corrupt length fails on the short stream before it is allocated whole.
    std::string s;
    char buf[4096];
    for (std::uint64_t left = n; left > 0;) {
      const size_t k = left < sizeof buf ? static_cast<size_t>(left) : sizeof buf;
      Need(buf, k, what);
      s.append(buf, k);
      left -= k;
    }
    return s;
  }
  void Need(void* p, size_t n, const char* what) {
    if (n > 0 && !r_(p, n)) {
      throw Error(std::string("simulation result ended early, while reading ") + what);
    }
  }

 private:
  const WireRead& r_;
};

// A trace's link usage (core/link_usage.h), on its own for other replies
// (cli/streamed_run.cpp) and inside the trace's stream.
void PutLinkUsage(WireOut& out, const LinkUsage& u);
LinkUsage GetLinkUsage(WireIn& in);

// Returns false if `write` failed.
bool WriteTraceWire(const ExecutionTrace& t, const WireWrite& write);
// The same stream from `t`'s other fields and `records` records made one at a time by
// `record(i)`, so that a writer need not hold them all (the simulation child: the executor
// keeps 24 bytes a task, a TraceRecord is 40).
bool WriteTraceWire(const ExecutionTrace& t, size_t records,
                    const std::function<TraceRecord(size_t)>& record, const WireWrite& write);
// `max_records`, when not 0: the most records the reader accepts (the graph's task count),
// and the record vector is then allocated once at the announced size instead of grown as
// data arrives (doubling, which at tens of millions of records holds the old and the new
// buffer at once). 0: no bound known; a corrupt count then fails on the short stream before
// it is allocated whole.
ExecutionTrace ReadTraceWire(const WireRead& read, unsigned long long max_records = 0);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_TRACE_WIRE_H_
