// Aligning the steady clocks of a multi-process run's processes (process_group.h), so that
// their traces share one time origin and rank 0 can merge them task by task.
//
// Offsets by Cristian's algorithm (Cristian 1989, "Probabilistic clock synchronization"): a
// process sends rank 0 a ping at t0 on its own clock, rank 0 answers with its clock's reading
// T, and the answer arrives at t1; then rank 0's clock read T at about (t0 + t1) / 2 here,
// within +-(t1 - t0) / 2. Of `samples` ping-pongs the one with the smallest round trip is
// kept, since its bound is the tightest (a scheduler delay only ever lengthens a round trip).
// Then rank 0 picks a start instant lead_s ahead of its now and broadcasts it; every process
// gets it converted to its own clock.
//
// steady_clock is CLOCK_MONOTONIC on Linux: processes of one server read the same clock (their
// offsets come out ~0), processes of different servers do not (their offsets are arbitrary).
#ifndef STRATASIM_VALIDATE_CLOCK_SYNC_H_
#define STRATASIM_VALIDATE_CLOCK_SYNC_H_

#include <chrono>
#include <functional>

#include "validate/process_group.h"

namespace stratasim::validate {

using SteadyTime = std::chrono::steady_clock::time_point;
// The clock a process reads (steady_clock::now outside tests; tests shift it to model another
// server's clock).
using ClockFunction = std::function<SteadyTime()>;

struct ClockSyncOptions {
  // Ping-pongs per process; the fastest is kept.
  int samples = 16;
  // How far after rank 0's now the start instant is: long enough for the broadcast of it to
  // reach every process first (a process that learns it late starts at once; its times stay
  // relative to the same instant).
  double lead_s = 0.02;
  // The data-plane channel of the ping-pongs; the host backend keeps it out of its own
  // channels (collective ids, transfer numbers).
  int channel = ProcessGroup::kMaxChannel;
};

struct ClockSync {
  // Rank 0's clock minus this process's, in seconds (0 on rank 0).
  double offset_s = 0;
  // The round trip of the kept sample: the offset is known within +-round_trip_s / 2.
  double round_trip_s = 0;
  // The common start instant, on this process's clock.
  SteadyTime start;
};

// Called by every process's main thread at the same point (it uses the data plane on
// options.channel and then the control plane). Throws ProcessGroupError when a peer is silent.
ClockSync SyncClocks(ProcessGroup& pg, const ClockSyncOptions& options = {},
                     const ClockFunction& now = nullptr);

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_CLOCK_SYNC_H_
