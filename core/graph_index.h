// Who meets whom in a task graph: the two ends of each point-to-point transfer (a Send and a
// Recv paired by tag) and each collective member's place in its collective. Every executor
// (sim/executor.cpp, validate/host, validate/cuda) pairs its tasks through it.
//
// It grows as tasks are taken in and shrinks as they retire, so that a graph simulated while
// it is planned (docs/scale.md, "Iterations") holds only the transfers still live.
#ifndef STRATASIM_CORE_GRAPH_INDEX_H_
#define STRATASIM_CORE_GRAPH_INDEX_H_

#include <cstddef>
#include <deque>
#include <unordered_map>
#include <utility>

#include "core/task_graph.h"

namespace stratasim {

class GraphIndex {
 public:
  GraphIndex() = default;
  // Takes in every task `g` holds.
  explicit GraphIndex(const TaskGraph& g);

  // Takes in task `t`, after the tasks taken in before it (in id order). Throws
  // stratasim::Error when its tag already has an end of its kind.
  void Add(const Task& t);
  // Forgets the transfers both of whose ends are below `below` (retired tasks).
  void Retire(TaskId below);

  // The other end of transfer task `t` (kSend or kRecv), or -1 while it is not taken in.
  TaskId Peer(const Task& t) const;
  // The number of `t`'s transfer: 0, 1, ... in the order their first end was taken in, for
  // executors that keep state per transfer.
  int TransferNumber(const Task& t) const;
  // Transfers numbered so far, and those held (not retired).
  int transfers() const { return next_number_; }
  std::size_t live_transfers() const { return by_tag_.size(); }

  // The position of member task `t` in its collective `c` (c.ranks[i] runs c.members[i]),
  // in O(log n): TaskGraph::Add appends the members in id order. Throws stratasim::Error when
  // `t` is not one of them.
  static int Member(const Collective& c, const Task& t);

 private:
  struct Ends {
    TaskId send = -1;
    TaskId recv = -1;
    int number = 0;
  };
  const Ends& EndsOf(const Task& t) const;

  std::unordered_map<int, Ends> by_tag_;
  std::deque<std::pair<TaskId, int>> ends_;  // (task, tag) of each end taken in, in id order
  int next_number_ = 0;
};

}  // namespace stratasim

#endif  // STRATASIM_CORE_GRAPH_INDEX_H_
