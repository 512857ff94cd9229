#include "core/graph_index.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace stratasim {

GraphIndex::GraphIndex(const TaskGraph& g) {
  for (const Task& t : g.tasks()) Add(t);
}

void GraphIndex::Add(const Task& t) {
  if (t.kind != TaskKind::kSend && t.kind != TaskKind::kRecv) return;
  auto [it, fresh] = by_tag_.try_emplace(t.tag);
  Ends& e = it->second;
  if (fresh) e.number = next_number_++;
  TaskId& end = t.kind == TaskKind::kSend ? e.send : e.recv;
  if (end >= 0) {
    throw Error("tag " + std::to_string(t.tag) + " is used by two tasks of one kind");
  }
  end = t.id;
  ends_.emplace_back(t.id, t.tag);
}

void GraphIndex::Retire(TaskId below) {
  while (!ends_.empty() && ends_.front().first < below) {
    const auto it = by_tag_.find(ends_.front().second);
    ends_.pop_front();
    if (it == by_tag_.end()) continue;
    const Ends& e = it->second;
    // The later end's turn: both retired. (An end whose peer never came stays.)
    if (e.send >= 0 && e.recv >= 0 && e.send < below && e.recv < below) by_tag_.erase(it);
  }
}

const GraphIndex::Ends& GraphIndex::EndsOf(const Task& t) const {
  const auto it = by_tag_.find(t.tag);
  if (it == by_tag_.end() || (t.kind != TaskKind::kSend && t.kind != TaskKind::kRecv)) {
    throw Error("task " + std::to_string(t.id) + " is not a transfer taken in");
  }
  return it->second;
}

TaskId GraphIndex::Peer(const Task& t) const {
  const Ends& e = EndsOf(t);
  return t.kind == TaskKind::kSend ? e.recv : e.send;
}

int GraphIndex::TransferNumber(const Task& t) const { return EndsOf(t).number; }

int GraphIndex::Member(const Collective& c, const Task& t) {
  const auto it = std::lower_bound(c.members.begin(), c.members.end(), t.id);
  if (it == c.members.end() || *it != t.id) {
    throw Error("task " + std::to_string(t.id) + " is not a member of its collective");
  }
  return static_cast<int>(it - c.members.begin());
}

}  // namespace stratasim
