#include "validate/clock_sync.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "core/error.h"

namespace stratasim::validate {
namespace {

std::int64_t Ns(SteadyTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

SteadyTime FromNs(std::int64_t ns) {
  return SteadyTime(std::chrono::duration_cast<SteadyTime::duration>(std::chrono::nanoseconds(ns)));
}

}  // namespace

ClockSync SyncClocks(ProcessGroup& pg, const ClockSyncOptions& options, const ClockFunction& now) {
  if (options.samples < 1) {
    throw Error("clock sync: samples must be >= 1, got " + std::to_string(options.samples));
  }
  const ClockFunction clock = now ? now : [] { return std::chrono::steady_clock::now(); };
  const Wait wait{"clock sync", nullptr};
  ClockSync out;
  if (pg.rank() == 0) {
    // Serve each process's pings in turn: a ping is answered with this clock's reading.
    for (int p = 1; p < pg.size(); ++p) {
      for (int k = 0; k < options.samples; ++k) {
        std::int64_t ping = 0;
        pg.Recv(p, options.channel, &ping, sizeof ping, wait);
        const std::int64_t t = Ns(clock());
        pg.Send(p, options.channel, &t, sizeof t, wait);
      }
    }
  } else {
    double best_rtt_s = std::numeric_limits<double>::infinity();
    for (int k = 0; k < options.samples; ++k) {
      const SteadyTime t0 = clock();
      const std::int64_t ping = k;
      pg.Send(0, options.channel, &ping, sizeof ping, wait);
      std::int64_t root_ns = 0;
      pg.Recv(0, options.channel, &root_ns, sizeof root_ns, wait);
      const SteadyTime t1 = clock();
      const double rtt_s = std::chrono::duration<double>(t1 - t0).count();
      if (rtt_s < best_rtt_s) {
        best_rtt_s = rtt_s;
        // Rank 0 read root_ns at about the midpoint of [t0, t1] here.
        const double mid_ns = 0.5 * (static_cast<double>(Ns(t0)) + static_cast<double>(Ns(t1)));
        out.offset_s = (static_cast<double>(root_ns) - mid_ns) * 1e-9;
      }
    }
    out.round_trip_s = best_rtt_s;
  }
  std::string start_text;
  if (pg.rank() == 0) {
    const auto lead = std::chrono::duration_cast<SteadyTime::duration>(
        std::chrono::duration<double>(std::max(0.0, options.lead_s)));
    start_text = std::to_string(Ns(clock() + lead));
  }
  pg.Broadcast(&start_text, 0);
  const std::int64_t root_start_ns = std::stoll(start_text);
  out.start = FromNs(root_start_ns - static_cast<std::int64_t>(out.offset_s * 1e9));
  return out;
}

}  // namespace stratasim::validate
