#include "core/task_graph.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "core/error.h"

namespace stratasim {
namespace {

thread_local TaskGraph::AddHook t_add_hook;

}  // namespace

void TaskGraph::SetThreadAddHook(AddHook hook) { t_add_hook = std::move(hook); }

const Task& TaskGraph::task(TaskId id) const {
  if (id < base_ || id >= next_id()) {
    throw Error("task " + std::to_string(id) +
                (id >= 0 && id < base_ ? " was retired" : " does not exist"));
  }
  return tasks_[static_cast<size_t>(id - base_)];
}

const Collective& TaskGraph::collective(int index) const {
  if (index < collective_base_ || index >= next_collective()) {
    throw Error("collective " + std::to_string(index) +
                (index >= 0 && index < collective_base_ ? " was retired" : " does not exist"));
  }
  return collectives_[static_cast<size_t>(index - collective_base_)];
}

Task& TaskGraph::Mutable(TaskId id, const char* what) {
  if (id < base_ || id >= next_id()) {
    throw Error(std::string(what) + ": task " + std::to_string(id) +
                (id >= 0 && id < base_ ? " was retired" : " does not exist"));
  }
  return tasks_[static_cast<size_t>(id - base_)];
}

void TaskGraph::Retire(TaskId below) {
  below = std::min(below, next_id());
  while (base_ < below) {
    tasks_.pop_front();
    ++base_;
  }
  while (!collectives_.empty() &&
         collectives_.front().members.size() == collectives_.front().ranks.size() &&
         collectives_.front().members.back() < base_) {
    collectives_.pop_front();
    ++collective_base_;
  }
}

TaskGraph::TaskGraph(int num_ranks) : num_ranks_(num_ranks) {
  if (num_ranks < 0) throw Error("a task graph needs a non-negative number of ranks");
}

int TaskGraph::Stream(const std::string& name) {
  for (int i = 0; i < static_cast<int>(streams_.size()); ++i) {
    if (streams_[i] == name) return i;
  }
  streams_.push_back(name);
  stream_priorities_.push_back(0);
  return static_cast<int>(streams_.size()) - 1;
}

void TaskGraph::SetStreamPriority(int stream, int priority) {
  if (stream < 0 || stream >= static_cast<int>(streams_.size())) {
    throw Error("SetStreamPriority: stream " + std::to_string(stream) + " is not declared");
  }
  if (priority < kMinStreamPriority || priority > kMaxStreamPriority) {
    throw Error("SetStreamPriority: priority " + std::to_string(priority) + " of stream '" +
                streams_[stream] + "' is outside [" + std::to_string(kMinStreamPriority) + ", " +
                std::to_string(kMaxStreamPriority) + "]");
  }
  stream_priorities_[stream] = priority;
}

int TaskGraph::stream_priority(int stream) const {
  if (stream < 0 || stream >= static_cast<int>(streams_.size())) {
    throw Error("stream_priority: stream " + std::to_string(stream) + " is not declared");
  }
  return stream_priorities_[stream];
}

void TaskGraph::SetRankStart(int rank, double start_s) {
  if (rank < 0 || rank >= num_ranks_) {
    throw Error("SetRankStart: rank " + std::to_string(rank) + " is outside [0, " +
                std::to_string(num_ranks_) + ")");
  }
  if (!std::isfinite(start_s) || start_s < 0) {
    throw Error("SetRankStart: rank " + std::to_string(rank) + "'s start " +
                std::to_string(start_s) + " s must be finite and >= 0");
  }
  if (rank_start_s_.empty()) rank_start_s_.assign(static_cast<size_t>(num_ranks_), 0.0);
  rank_start_s_[static_cast<size_t>(rank)] = start_s;
}

double TaskGraph::rank_start_s(int rank) const {
  if (rank < 0 || rank >= num_ranks_) {
    throw Error("rank_start_s: rank " + std::to_string(rank) + " is outside the graph");
  }
  return rank_start_s_.empty() ? 0.0 : rank_start_s_[static_cast<size_t>(rank)];
}

bool TaskGraph::has_stream_priorities() const {
  return std::any_of(stream_priorities_.begin(), stream_priorities_.end(),
                     [](int p) { return p != 0; });
}

void TaskGraph::CheckTask(const Task& t) const {
  auto fail = [&](const std::string& why) {
    throw Error("task " + std::to_string(t.id) + " ('" + t.name + "'): " + why);
  };
  if (t.rank < 0 || t.rank >= num_ranks_) {
    fail("rank " + std::to_string(t.rank) + " is outside [0, " + std::to_string(num_ranks_) + ")");
  }
  if (t.stream < 0 || t.stream >= static_cast<int>(streams_.size())) {
    fail("stream " + std::to_string(t.stream) + " is not declared");
  }
  for (TaskId d : t.deps) {
    if (d < 0 || d >= t.id) fail("dependency " + std::to_string(d) + " is not an earlier task");
  }
  if (t.mirror != -1 && (t.mirror < 0 || t.mirror >= t.id)) {
    fail("mirror " + std::to_string(t.mirror) + " is not an earlier task");
  }
  if (t.flops < 0 || t.bytes < 0) fail("flops and bytes must not be negative");
  if (t.on_host && t.kind != TaskKind::kCompute && t.kind != TaskKind::kSend &&
      t.kind != TaskKind::kRecv) {
    fail("only compute, send and receive tasks run on a host CPU");
  }
  switch (t.kind) {
    case TaskKind::kCollective:
      if (t.collective < collective_base_ || t.collective >= next_collective()) {
        fail("collective " + std::to_string(t.collective) + " does not exist");
      }
      break;
    case TaskKind::kSend:
    case TaskKind::kRecv:
      if (t.peer < 0 || t.peer >= num_ranks_) fail("peer rank is outside the graph");
      break;
    default:
      break;
  }
}

void TaskGraph::SetTaskLimit(long long limit) {
  task_limit_ = std::clamp<long long>(limit, 1, kMaxTasksPerRun);
}

TaskId TaskGraph::Add(Task task) {
  if (t_add_hook) t_add_hook(this, task.iteration);
  if (static_cast<long long>(next_id()) >= task_limit_) throw TaskLimitError(task_limit_);
  task.id = next_id();
  CheckTask(task);
  if (task.iteration < last_iteration_) iteration_ordered_ = false;
  last_iteration_ = std::max(last_iteration_, task.iteration);
  if (task.kind == TaskKind::kCollective) {
    Collective& c = collectives_[static_cast<size_t>(task.collective - collective_base_)];
    if (c.members.size() >= c.ranks.size() || c.ranks[c.members.size()] != task.rank) {
      throw Error("task " + std::to_string(task.id) + " ('" + task.name +
                  "'): not the next member of collective " + std::to_string(task.collective));
    }
    c.members.push_back(task.id);
  }
  tasks_.push_back(std::move(task));
  return tasks_.back().id;
}

void TaskGraph::SetMirror(TaskId task, TaskId of) {
  Task& t = Mutable(task, "SetMirror");
  if (of < 0 || of >= task) {
    throw Error("SetMirror: task " + std::to_string(task) +
                " may only mirror an earlier task, not " + std::to_string(of));
  }
  t.mirror = of;
}

void TaskGraph::SetAlgorithm(int index, std::string algorithm) {
  collective(index);  // throws for a collective it does not have
  collectives_[static_cast<size_t>(index - collective_base_)].algorithm = std::move(algorithm);
}

void TaskGraph::SetFold(std::vector<int> representative) {
  if (!representative.empty()) {
    if (static_cast<int>(representative.size()) != num_ranks_) {
      throw Error("fold: " + std::to_string(representative.size()) + " representatives for " +
                  std::to_string(num_ranks_) + " ranks");
    }
    for (int r = 0; r < num_ranks_; ++r) {
      const int rep = representative[r];
      if (rep < 0 || rep >= num_ranks_ || representative[rep] != rep) {
        throw Error("fold: rank " + std::to_string(r) + "'s representative " + std::to_string(rep) +
                    " is not a rank that represents itself");
      }
    }
  }
  fold_ = std::move(representative);
}

void TaskGraph::AddDep(TaskId task, TaskId dep) {
  Task& t = Mutable(task, "AddDep");
  if (dep < 0 || dep >= task) {
    throw Error("AddDep: task " + std::to_string(task) +
                " may only depend on an earlier task, not " + std::to_string(dep));
  }
  t.deps.push_back(dep);
}

int TaskGraph::DeclareCollective(Collective c) {
  const std::string what = "collective " + std::to_string(next_collective());
  if (c.ranks.empty()) throw Error(what + " has no member ranks");
  std::map<int, int> seen;
  for (int r : c.ranks) {
    if (r < 0 || r >= num_ranks_) {
      throw Error(what + ": rank " + std::to_string(r) + " is outside the graph");
    }
    if (seen[r]++) throw Error(what + ": rank " + std::to_string(r) + " appears twice");
  }
  const bool rooted = c.kind == CollectiveKind::kBroadcast || c.kind == CollectiveKind::kReduce ||
                      c.kind == CollectiveKind::kGather || c.kind == CollectiveKind::kScatter;
  if (rooted && !seen.count(c.root)) {
    throw Error(what + ": root " + std::to_string(c.root) + " is not a member");
  }
  const size_t n = c.ranks.size();
  if (c.kind == CollectiveKind::kAllToAllV) {
    if (c.matrix.size() != n * n) {
      throw Error(what + ": all_to_all_v needs a " + std::to_string(n) + "x" + std::to_string(n) +
                  " size matrix, got " + std::to_string(c.matrix.size()) + " entries");
    }
    for (double b : c.matrix) {
      if (b < 0) throw Error(what + ": all_to_all_v sizes must not be negative");
    }
  } else if (!c.matrix.empty()) {
    throw Error(what + ": only all_to_all_v takes a size matrix");
  }
  if (c.bytes < 0) throw Error(what + ": bytes must not be negative");
  c.members.clear();
  collectives_.push_back(std::move(c));
  return next_collective() - 1;
}

std::vector<TaskId> TaskGraph::AddCollective(Collective c, const Task& member) {
  const int index = DeclareCollective(std::move(c));
  for (int r : std::vector<int>(collective(index).ranks)) {
    Task t = member;
    t.kind = TaskKind::kCollective;
    t.rank = r;
    t.collective = index;
    Add(std::move(t));
  }
  return collective(index).members;
}

std::pair<TaskId, TaskId> TaskGraph::AddTransfer(int src, int dst, double bytes, Task send,
                                                 Task recv) {
  const int tag = next_tag_++;
  send.kind = TaskKind::kSend;
  send.rank = src;
  send.peer = dst;
  send.tag = tag;
  send.bytes = bytes;
  recv.kind = TaskKind::kRecv;
  recv.rank = dst;
  recv.peer = src;
  recv.tag = tag;
  recv.bytes = bytes;
  TaskId s = Add(std::move(send));
  TaskId r = Add(std::move(recv));
  return {s, r};
}

void TaskGraph::Validate() const {
  for (const Task& t : tasks_) CheckTask(t);
  // Every send pairs with exactly one receive of the same tag, bytes and mirrored ranks.
  std::map<int, std::pair<const Task*, const Task*>> by_tag;
  for (const Task& t : tasks_) {
    if (t.kind != TaskKind::kSend && t.kind != TaskKind::kRecv) continue;
    auto& slot = by_tag[t.tag];
    const Task*& side = t.kind == TaskKind::kSend ? slot.first : slot.second;
    if (side) throw Error("tag " + std::to_string(t.tag) + " is used by two tasks of one kind");
    side = &t;
  }
  for (const auto& [tag, pair] : by_tag) {
    if (!pair.first || !pair.second) {
      throw Error("tag " + std::to_string(tag) + " has a send without a receive or vice versa");
    }
    if (pair.first->peer != pair.second->rank || pair.second->peer != pair.first->rank ||
        pair.first->bytes != pair.second->bytes) {
      throw Error("tag " + std::to_string(tag) + ": send and receive do not match");
    }
  }
  for (int ci = collective_base_; ci < next_collective(); ++ci) {
    const Collective& c = collective(ci);
    if (c.members.size() != c.ranks.size()) {
      throw Error("collective " + std::to_string(ci) + " has " + std::to_string(c.members.size()) +
                  " member tasks for " + std::to_string(c.ranks.size()) + " ranks");
    }
    for (size_t i = 0; i < c.ranks.size(); ++i) {
      TaskId m = c.members[i];
      if (m < base_ || m >= next_id() || task(m).collective != ci || task(m).rank != c.ranks[i] ||
          task(m).kind != TaskKind::kCollective) {
        throw Error("collective " + std::to_string(ci) + ": member " + std::to_string(i) +
                    " is not a task of rank " + std::to_string(c.ranks[i]));
      }
    }
  }
}

std::string_view ToString(TaskKind k) {
  switch (k) {
    case TaskKind::kCompute:
      return "compute";
    case TaskKind::kCollective:
      return "collective";
    case TaskKind::kSend:
      return "send";
    case TaskKind::kRecv:
      return "recv";
    case TaskKind::kCopy:
      return "copy";
    case TaskKind::kMemory:
      return "memory";
  }
  return "?";
}

std::string_view ToString(Phase p) {
  switch (p) {
    case Phase::kForward:
      return "forward";
    case Phase::kBackward:
      return "backward";
    case Phase::kRecompute:
      return "recompute";
    case Phase::kOptimizer:
      return "optimizer";
    case Phase::kCommunication:
      return "communication";
    case Phase::kOther:
      return "other";
  }
  return "?";
}

std::string_view ToString(OpKind k) {
  switch (k) {
    case OpKind::kGemm:
      return "gemm";
    case OpKind::kAttention:
      return "attention";
    case OpKind::kFusedAttention:
      return "fused_attention";
    case OpKind::kElementwise:
      return "elementwise";
    case OpKind::kOptimizer:
      return "optimizer";
    case OpKind::kOther:
      return "other";
  }
  return "?";
}

std::string_view ToString(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kReduce:
      return "reduce";
    case CollectiveKind::kAllToAll:
      return "all_to_all";
    case CollectiveKind::kAllToAllV:
      return "all_to_all_v";
    case CollectiveKind::kGather:
      return "gather";
    case CollectiveKind::kScatter:
      return "scatter";
  }
  return "?";
}

std::string_view ToString(CopyDirection d) {
  return d == CopyDirection::kHostToDevice ? "h2d" : "d2h";
}

}  // namespace stratasim
