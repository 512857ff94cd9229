#include "sim/stream_gate.h"

namespace stratasim::sim {

bool StreamGate::Holds(int rank, int priority) const {
  const Rank& r = ranks_[static_cast<size_t>(rank)];
  return !r.in_flight.empty() && r.in_flight.rbegin()->first > priority;
}

void StreamGate::Hold(int rank, int priority, TaskId id) {
  if (ranks_[static_cast<size_t>(rank)].held.insert({-priority, id}).second) ++held_count_;
}

void StreamGate::TakeOff(int rank, int priority, TaskId id) {
  if (!flying_.emplace(id, std::make_pair(rank, priority)).second) return;
  ++ranks_[static_cast<size_t>(rank)].in_flight[priority];
}

void StreamGate::Landed(TaskId id, std::vector<TaskId>* released) {
  auto it = flying_.find(id);
  if (it == flying_.end()) return;
  const auto [rank, priority] = it->second;
  flying_.erase(it);
  Rank& r = ranks_[static_cast<size_t>(rank)];
  auto count = r.in_flight.find(priority);
  if (--count->second == 0) r.in_flight.erase(count);
  // The held set is ordered by descending priority: release from the front while nothing
  // still in flight outranks the task.
  while (!r.held.empty() && !Holds(rank, -r.held.begin()->first)) {
    released->push_back(r.held.begin()->second);
    r.held.erase(r.held.begin());
    --held_count_;
  }
}

}  // namespace stratasim::sim
