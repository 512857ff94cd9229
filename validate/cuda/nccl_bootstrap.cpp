#include "validate/cuda/nccl_bootstrap.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/graph_index.h"

namespace stratasim::validate::cuda {
namespace {

std::string Describe(const ProcessGroup& pg) {
  return "rank " + std::to_string(pg.rank()) + " (host " + pg.host() + ")";
}

}  // namespace

CommPlan PlanCommunicators(const TaskGraph& g) {
  CommPlan plan;
  plan.group_of_task.assign(g.tasks().size(), -1);
  plan.member_of_task.assign(g.tasks().size(), -1);
  std::map<std::vector<int>, int> index;
  auto group = [&](std::vector<int> key, const std::vector<int>& ranks) {
    const auto [it, added] = index.emplace(key, static_cast<int>(plan.groups.size()));
    if (added) plan.groups.push_back(CommGroup{std::move(key), ranks});
    return it->second;
  };
  for (const Collective& c : g.collectives()) {
    std::vector<int> key = c.ranks;
    key.push_back(-1);
    for (TaskId m : c.members) key.push_back(g.task(m).stream);
    const int gi = group(std::move(key), c.ranks);
    for (std::size_t i = 0; i < c.members.size(); ++i) {
      plan.group_of_task[c.members[i]] = gi;
      plan.member_of_task[c.members[i]] = static_cast<int>(i);
    }
  }
  std::vector<int> all(g.num_ranks());
  for (int r = 0; r < g.num_ranks(); ++r) all[r] = r;
  const GraphIndex index_of(g);
  for (const Task& t : g.tasks()) {
    if (t.kind != TaskKind::kSend) continue;
    const TaskId peer = index_of.Peer(t);
    if (peer < 0) continue;  // TaskGraph::Validate guarantees pairs
    const Task& recv = g.task(peer);
    const int gi = group({-2, t.stream, recv.stream}, all);
    plan.group_of_task[t.id] = plan.group_of_task[recv.id] = gi;
    plan.member_of_task[t.id] = t.rank;
    plan.member_of_task[recv.id] = recv.rank;
  }
  return plan;
}

std::string HexEncode(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string HexDecode(const std::string& hex) {
  auto digit = [&](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw Error("not a hex digit in an NCCL unique id: '" + std::string(1, c) + "'");
  };
  if (hex.size() % 2 != 0) {
    throw Error("an NCCL unique id in hex has an odd length (" + std::to_string(hex.size()) + ")");
  }
  std::string out(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<char>(digit(hex[2 * i]) * 16 + digit(hex[2 * i + 1]));
  }
  return out;
}

NcclBootstrap::NcclBootstrap(ProcessGroup& processes, NcclCalls calls,
                             const std::vector<CommGroup>& groups)
    : processes_(processes), calls_(std::move(calls)), groups_(groups.size(), nullptr) {
  const int rank = processes_.rank(), size = processes_.size();
  try {
    // 1. The device: processes of one host take its devices in rank order.
    std::vector<std::string> hosts;
    try {
      hosts = processes_.AllGather(processes_.host());
    } catch (const ProcessGroupError& e) {
      throw BackendError(BackendError::Kind::kCommunication,
                         Describe(processes_) + ": exchanging hosts: " + e.what());
    }
    for (int r = 0; r < rank; ++r) local_rank_ += hosts.at(r) == hosts.at(rank) ? 1 : 0;
    std::string error;
    int count = 0;
    error = calls_.device_count(&count);
    if (!error.empty()) {
      error = "cudaGetDeviceCount: " + error;
    } else if (count <= 0) {
      error = "no CUDA device visible";
    } else {
      device_ = local_rank_ % count;
      error = calls_.set_device(device_);
      if (!error.empty()) error = "cudaSetDevice(" + std::to_string(device_) + "): " + error;
    }
    if (!error.empty()) {
      error += " (local rank " + std::to_string(local_rank_) + " on host " + hosts[rank] + ")";
    }
    Agree("choosing a CUDA device", error, BackendError::Kind::kUnavailable);

    // 2. The unique id, from rank 0.
    std::string id;
    error.clear();
    if (rank == 0) {
      error = calls_.get_unique_id(&id);
      if (error.empty() && id.size() != kNcclUniqueIdBytes) {
        error = "ncclGetUniqueId gave " + std::to_string(id.size()) + " bytes, not " +
                std::to_string(kNcclUniqueIdBytes);
      }
      if (!error.empty()) error = "ncclGetUniqueId: " + error;
    }
    Agree("creating the NCCL unique id", error, BackendError::Kind::kCommunication);
    std::string hex = rank == 0 ? HexEncode(id) : std::string();
    try {
      processes_.Broadcast(&hex, 0);
    } catch (const ProcessGroupError& e) {
      throw BackendError(BackendError::Kind::kCommunication,
                         Describe(processes_) + ": receiving the NCCL unique id: " + e.what());
    }
    error.clear();
    try {
      id = HexDecode(hex);
      if (id.size() != kNcclUniqueIdBytes) {
        error = "the NCCL unique id received has " + std::to_string(id.size()) + " bytes, not " +
                std::to_string(kNcclUniqueIdBytes);
      }
    } catch (const Error& e) {
      error = e.what();
    }
    Agree("receiving the NCCL unique id", error, BackendError::Kind::kCommunication);

    // 3. The world.
    error = calls_.comm_init_rank(&world_, size, id, rank);
    if (!error.empty()) {
      world_ = nullptr;
      error = "ncclCommInitRank(" + std::to_string(size) + " ranks, rank " + std::to_string(rank) +
              "): " + error;
    }
    Agree("joining the NCCL world communicator", error, BackendError::Kind::kCommunication);

    // 4. The plan's communicators, one split of the world each, in the plan's order.
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const std::vector<int>& ranks = groups[i].ranks;
      const auto at = std::find(ranks.begin(), ranks.end(), rank);
      const bool member = at != ranks.end();
      const int key = member ? static_cast<int>(at - ranks.begin()) : 0;
      error = calls_.comm_split(world_, member ? 0 : kNcclNoColor, key, &groups_[i]);
      if (!error.empty()) {
        groups_[i] = nullptr;
        error = "ncclCommSplit of communicator " + std::to_string(i) + " (" +
                std::to_string(ranks.size()) + " ranks): " + error;
      } else if (!member) {
        groups_[i] = nullptr;
      }
      Agree("creating NCCL communicator " + std::to_string(i) + " of " +
                std::to_string(groups.size()),
            error, BackendError::Kind::kCommunication);
    }
  } catch (...) {
    AbortAll();
    throw;
  }
}

NcclBootstrap::~NcclBootstrap() {
  if (!aborted_) DestroyAll();
}

void NcclBootstrap::Agree(const std::string& step, const std::string& error,
                          BackendError::Kind kind) {
  std::vector<std::string> outcomes;
  try {
    outcomes = processes_.AllGather(error);
  } catch (const ProcessGroupError& e) {
    // A process that did not answer: it died, or hangs in the step (in NCCL, say).
    throw BackendError(
        BackendError::Kind::kCommunication,
        Describe(processes_) + ": " + step + ": " +
            (error.empty() ? std::string() : "failed here (" + error + "), and ") +
            "no outcome from " +
            (e.peer() >= 0 ? "rank " + std::to_string(e.peer()) : std::string("a peer")) + ": " +
            e.what());
  }
  int first = -1;
  std::vector<int> others;
  for (int r = 0; r < static_cast<int>(outcomes.size()); ++r) {
    if (outcomes[r].empty()) continue;
    if (first < 0) {
      first = r;
    } else {
      others.push_back(r);
    }
  }
  if (first < 0) return;
  std::string message = "cuda backend, NCCL bootstrap: rank " + std::to_string(first) + " failed " +
                        step + ": " + outcomes[first];
  if (!others.empty()) {
    message += " (also failed: rank";
    for (int r : others) message += " " + std::to_string(r);
    message += ")";
  }
  throw BackendError(kind, message);
}

std::vector<NcclComm> NcclBootstrap::all() const {
  std::vector<NcclComm> out;
  if (world_ != nullptr) out.push_back(world_);
  for (NcclComm c : groups_) {
    if (c != nullptr) out.push_back(c);
  }
  return out;
}

void NcclBootstrap::AbortAll() {
  if (aborted_) return;
  aborted_ = true;
  for (NcclComm& c : groups_) {
    if (c != nullptr) calls_.comm_abort(c);
    c = nullptr;
  }
  if (world_ != nullptr) calls_.comm_abort(world_);
  world_ = nullptr;
}

void NcclBootstrap::DestroyAll() {
  for (NcclComm& c : groups_) {
    if (c != nullptr) calls_.comm_destroy(c);
    c = nullptr;
  }
  if (world_ != nullptr) calls_.comm_destroy(world_);
  world_ = nullptr;
}

}  // namespace stratasim::validate::cuda
