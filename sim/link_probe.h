// Records how many bytes each link carried when (ExecutionTrace::link_usage): the executor
// reports each Comm it starts and ends, and calls Tick at the events it already handles;
// when an interval is due, Tick reads every running Comm's progress from SimGrid and adds what
// moved since the last reading to each link of the Comm's route (sim/link_recorder.h keeps
// the series). A Comm's last bytes are added when it ends. So a link's series integrates to
// the payload of every Comm that crossed it, and between two readings it holds the bytes
// that the max-min sharing really moved then, not a Comm's bytes spread over its life.
//
// Reading only: the probe creates no activity or timer, and reads a Comm's progress from its
// network action's state (remaining at its last update, less its rate since) without
// Comm::get_remaining, which in lazy mode updates the action's remaining in place: splitting
// that subtraction would change its rounding, and so the last digits of later completion
// times. Results do not depend on whether the probe runs.
//
// SimGrid's link-load plugin is not used: it updates a link's figure only when a flow
// crossing it changes state, so under contention its cumulative count is stale when another
// link's flow ends and the shares change.
#ifndef STRATASIM_SIM_LINK_PROBE_H_
#define STRATASIM_SIM_LINK_PROBE_H_

#include <simgrid/forward.h>

#include <cstdint>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/link_usage.h"
#include "sim/link_recorder.h"

namespace stratasim::sim {

class LinkProbe {
 public:
  // After the platform is built, in the Engine that runs it.
  LinkProbe();

  // Comm `c` from `src` to `dst`, carrying `bytes`, has just started; returns its slot.
  int Started(const simgrid::s4u::Comm& c, simgrid::s4u::Host* src, simgrid::s4u::Host* dst,
              double bytes);
  // The Comm of `slot` ended at `now`.
  void Done(int slot, double now);
  // Closes an interval at `now` if one is due: call before handling an event.
  void Tick(double now) {
    if (recorder_.Due(now)) Snapshot(now);
  }
  // The usage over [0, end_s]; call once, after the run.
  LinkUsage Finish(double end_s);

  long long snapshots() const { return snapshots_; }

 private:
  std::uint32_t HostIndex(simgrid::s4u::Host* h);
  int RouteOf(simgrid::s4u::Host* src, simgrid::s4u::Host* dst);
  void Snapshot(double now);
  void AddToRoute(int route, double bytes, double now);
  // Bytes per route not yet on its links, and the routes holding some.
  struct Pending {
    std::vector<double> bytes;
    std::vector<int> routes;
  };
  void Pend(int route, double bytes, bool late);
  void Flush(Pending& p, double now);

  struct Flow {
    const void* impl = nullptr;  // the Comm's ActivityImpl: its network action names it
    int route = -1;
    double bytes = 0;    // payload
    double counted = 0;  // bytes added to the links so far
  };
  std::vector<Flow> flows_;
  std::vector<int> free_;                         // slots of flows_ to reuse
  std::unordered_map<const void*, int> by_impl_;  // running Comms' slots
  std::uint32_t hosts_ = 0;                       // hosts numbered so far (HostIndex)
  // Per source host's number: (destination's number, route), sorted.
  std::vector<std::vector<std::pair<std::uint32_t, int>>> routes_from_;
  std::vector<std::vector<int>> routes_;  // link indices of the recorder
  Pending open_;                          // moved since the last close
  Pending late_;  // ended at the instant of the last close, reported after it
  std::unordered_map<const simgrid::s4u::Link*, int> link_index_;
  LinkRecorder recorder_;
  simgrid::kernel::resource::Model* model_ = nullptr;  // the network model
  bool lazy_ = true;
  long long snapshots_ = 0;
};

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_LINK_PROBE_H_
