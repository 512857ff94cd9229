// Stream priorities in the simulator (TaskGraph::SetStreamPriority; docs/architecture.md,
// "Stream priorities"): a gate per rank that holds a communication task while a communication
// task of a higher-priority stream is in flight on the same rank, and hands the held tasks back,
// highest priority first then lowest id, when those in flight finish.
//
// The gate only does the bookkeeping; the executor decides what is gated and when a task is in
// flight (sim/executor.cpp). Plain data, no SimGrid: unit-tested in stream_gate_test.cpp.
#ifndef STRATASIM_SIM_STREAM_GATE_H_
#define STRATASIM_SIM_STREAM_GATE_H_

#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/task_graph.h"

namespace stratasim::sim {

class StreamGate {
 public:
  explicit StreamGate(int num_ranks) : ranks_(static_cast<size_t>(num_ranks)) {}

  // Whether a task of `priority` on `rank` must wait: a task of a higher priority is in flight
  // there. Equal priorities never hold each other (they share the links, as before).
  bool Holds(int rank, int priority) const;
  // Keeps task `id` (of `priority`, on `rank`, for which Holds is true) until Landed releases it.
  void Hold(int rank, int priority, TaskId id);
  // Task `id` of `priority` is in flight on `rank` from now until Landed(id).
  void TakeOff(int rank, int priority, TaskId id);
  // Task `id` is no longer in flight (a task never reported by TakeOff is ignored). Appends to
  // `released` the tasks held on its rank that no task still in flight holds, highest priority
  // first, then lowest id.
  void Landed(TaskId id, std::vector<TaskId>* released);

  int held() const { return held_count_; }
  int in_flight() const { return static_cast<int>(flying_.size()); }

 private:
  struct Rank {
    std::map<int, int> in_flight;           // priority -> tasks in flight
    std::set<std::pair<int, TaskId>> held;  // (-priority, id): the release order
  };
  std::vector<Rank> ranks_;
  std::unordered_map<TaskId, std::pair<int, int>> flying_;  // id -> (rank, priority)
  int held_count_ = 0;
};

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_STREAM_GATE_H_
