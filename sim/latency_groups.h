// Stream fidelity, ring phases: when each edge of a pipelined ring runs as one flow carrying all
// its steps (Flow::latency_group), when does the ring finish?
//
// At step fidelity a ring step's data crosses every edge in turn, and an edge runs up to
// kRingSlots steps ahead of its own earlier ones, so a ring of steps s is bounded two ways:
//   - by its slowest edge: s step transfers back to back on it;
//   - by the latency path: each step pays, on average over the hops its data crosses, a hop's
//     fixed time (protocol delay + route latency) and a hop's transfer: s (F + t) with F and t
//     the means over the ring's edges.
// On identical edges the second bound holds (every step is lock-stepped: s (F + t), exact). On
// unequal edges (seven NVLink hops, then a NIC) the slow edge keeps several steps in flight and
// the first one holds: 1 GiB over 128 A100 GPUs took 12.33 ms at stream fidelity, adding the
// mean fixed time in series with the slow edge's transfer, against 10.71 ms at step.
//
// So each flow of a group pays its first step's fixed time, then its transfer (a SimGrid Comm,
// sharing links with everything else), and the group completes, all its flows at once, at
//   max(last transfer's end, latest flow start + s F + mean over the group of transfer times)
// where s F is the group's mean fixed time over all steps. Both terms come from the
// simulation: transfer times are the Comms' (contended) durations.
#ifndef STRATASIM_SIM_LATENCY_GROUPS_H_
#define STRATASIM_SIM_LATENCY_GROUPS_H_

#include <map>
#include <optional>
#include <vector>

namespace stratasim::sim {

class LatencyGroups {
 public:
  // Flow `flow` belongs to group `group`; `fixed_s` is its fixed time over all its steps
  // (protocol delays and route latencies).
  void Add(int group, int flow, double fixed_s);

  bool Has(int flow) const { return group_of_.count(flow) > 0; }

  // The group's mean fixed time over all steps (sF above).
  double MeanFixedSeconds(int flow) const;

  // The flow's dependencies are met at `now`: it pays its first step's fixed time next.
  void Started(int flow, double now);
  // Its transfer begins at `now`.
  void TransferStarted(int flow, double now);

  struct Completion {
    double at_s = 0;         // when every flow of the group completes (>= now)
    std::vector<int> flows;  // all of them
  };
  // Its transfer ended at `now`. Once every flow of its group has, returns when the group
  // completes (see the head of the file); nullopt before.
  std::optional<Completion> TransferDone(int flow, double now);

 private:
  struct Group {
    std::vector<int> flows;
    double fixed_sum_s = 0;
    double latest_start_s = 0;
    double transfer_sum_s = 0;
    int transfers_done = 0;
  };
  std::map<int, Group> groups_;
  std::map<int, int> group_of_;             // flow -> group
  std::map<int, double> transfer_start_s_;  // flow -> when its Comm began
};

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_LATENCY_GROUPS_H_
