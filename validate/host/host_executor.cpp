#include "validate/host/host_executor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <sstream>
#include <system_error>
#include <thread>

#include "core/graph_index.h"
#include "core/units.h"
#include "validate/backend.h"
#include "validate/clock_sync.h"
#include "validate/host/host_collectives.h"
#include "validate/host/host_kernels.h"
#include "validate/host/host_process_collectives.h"
#include "validate/host/sync.h"

namespace stratasim::validate::host {
namespace {

// The tasks of one (rank, stream), run by one thread, and the buffers they use.
struct Lane {
  int rank = 0;
  int stream = 0;
  std::vector<TaskId> tasks;
  double workspace_bytes = 0;
  std::unique_ptr<unsigned char[]> workspace;
};

// The rendezvous of one send/receive pair.
struct Transfer {
  std::mutex mu;
  std::condition_variable cv;
  bool send_ready = false;
  bool copied = false;
  const unsigned char* src = nullptr;
  double send_start_s = 0;
  double joined_s = 0;  // both ends ready
};

class Execution {
 public:
  Execution(const TaskGraph& g, const ExecutorLimits& limits)
      : g_(g),
        limits_(limits),
        pg_(limits.processes),
        index_(g),
        done_(g.tasks().size(), 0),
        records_(g.tasks().size()) {
    abort_.Subscribe(&cv_, &mu_);
    allocated_.assign(static_cast<std::size_t>(std::max(0, g.num_ranks())), 0.0);
    for (TraceRecord& r : records_) r.start_s = r.end_s = r.peers_joined_s = -1;
  }
  ~Execution() {
    abort_.Unsubscribe(&cv_);
    for (auto& t : transfers_) abort_.Unsubscribe(&t->cv);
  }

  ExecutionTrace Run() {
    CheckRanks();
    if (pg_) CheckMultiProcess();
    BuildLanes();
    for (std::size_t i = 0; i < g_.tasks().size(); ++i) records_[i].task = static_cast<TaskId>(i);
    if (pg_) {
      AgreeToStart();
    } else {
      AllocateWorkspaces();
      for (const Collective& c : g_.collectives()) {
        groups_.push_back(std::make_unique<GroupRun>(c, &abort_));
      }
    }
    Barrier start(static_cast<int>(lanes_.size()) + 1, &abort_);
    std::vector<std::thread> threads;
    threads.reserve(lanes_.size());
    try {
      for (Lane& lane : lanes_) {
        threads.emplace_back([this, &lane, &start] { LaneMain(lane, start); });
      }
    } catch (const std::system_error& e) {
      // The OS refused a thread: release those started and end with the reason.
      abort_.Abort(std::make_exception_ptr(BackendError(
          BackendError::Kind::kExecution, "host backend: cannot start thread " +
                                              std::to_string(threads.size() + 1) + " of " +
                                              std::to_string(lanes_.size()) + ": " + e.what())));
      for (std::thread& t : threads) t.join();
      Rethrow(MakeTrace());
    }
    // The common time origin: taken before any thread can read the clock (they are all held
    // at the start barrier, whose mutex orders this write before their reads). Processes agree
    // on an instant ahead of now instead, which each lane waits for.
    if (pg_) {
      try {
        clock_.SetOrigin(SyncClocks(*pg_).start);
      } catch (...) {
        abort_.Abort(std::current_exception());
      }
    } else {
      clock_.Reset();
    }
    try {
      start.Wait(clock_);
    } catch (const Aborted&) {
    }
    for (std::thread& t : threads) t.join();
    ExecutionTrace trace = MakeTrace();
    if (abort_.aborted()) Rethrow(std::move(trace));
    return trace;
  }

 private:
  void CheckRanks() const {
    if (pg_) {
      // One process per rank: this process needs one rank's threads, whatever limits_.ranks.
      if (pg_->size() != g_.num_ranks()) {
        std::ostringstream m;
        m << "host backend: the plan has " << g_.num_ranks() << " ranks but " << pg_->size()
          << " processes run it (one process per rank: start " << g_.num_ranks()
          << " processes, e.g. mpirun -np " << g_.num_ranks() << ")";
        throw BackendError(pg_->size() < g_.num_ranks() ? BackendError::Kind::kTooFewRanks
                                                        : BackendError::Kind::kExecution,
                           m.str());
      }
      return;
    }
    if (g_.num_ranks() > limits_.ranks) {
      std::ostringstream m;
      m << "host backend: the plan needs " << g_.num_ranks() << " ranks but this run has "
        << limits_.ranks << " (one thread per rank; pass --ranks " << g_.num_ranks()
        << " to time-share the cores, or plan for fewer GPUs)";
      throw BackendError(BackendError::Kind::kTooFewRanks, m.str());
    }
  }

  // What a multi-process run cannot do, found from the graph alone, so that every process
  // refuses it alike without talking.
  void CheckMultiProcess() const {
    // Every process runs one rank: a dependency on another rank's task could only be waited
    // for by a message the graph does not have. Ranks meet through collectives and send/recv
    // pairs, which carry their own synchronisation.
    for (const Task& t : g_.tasks()) {
      for (TaskId d : t.deps) {
        const Task& dep = g_.task(d);
        if (dep.rank == t.rank) continue;
        throw BackendError(BackendError::Kind::kExecution,
                           "host backend: " + Describe(t) + " depends on " + Describe(dep) +
                               ", of another rank; in a multi-process run ranks meet only "
                               "through collectives and send/recv pairs, so this plan cannot "
                               "run one process per rank");
      }
    }
    const long long channels = static_cast<long long>(g_.collectives().size()) +
                               static_cast<long long>(index_.transfers());
    if (channels > ClockSyncOptions{}.channel) {
      throw BackendError(BackendError::Kind::kExecution,
                         "host backend: the plan has " + std::to_string(channels) +
                             " collectives and transfers, more than the " +
                             std::to_string(ClockSyncOptions{}.channel) +
                             " message channels of a multi-process run");
    }
  }

  // A multi-process run's workspaces, and every process's word that it is ready: a process
  // that cannot start (out of memory) ends the run on all of them with its reason, instead of
  // leaving its peers to time out.
  void AgreeToStart() {
    std::string status;
    std::exception_ptr mine;
    try {
      AllocateWorkspaces();
    } catch (const BackendError& e) {
      mine = std::current_exception();
      status = std::to_string(static_cast<int>(e.kind())) + " " + e.what();
    }
    std::vector<std::string> all;
    try {
      all = pg_->AllGather(status);
    } catch (const ProcessGroupError& e) {
      throw BackendError(BackendError::Kind::kCommunication,
                         std::string("host backend: ") + e.what(), MakeTrace());
    }
    if (mine) std::rethrow_exception(mine);
    for (std::size_t p = 0; p < all.size(); ++p) {
      if (all[p].empty()) continue;
      const std::size_t space = all[p].find(' ');
      const int kind = std::atoi(all[p].substr(0, space).c_str());
      std::string why = space == std::string::npos ? all[p] : all[p].substr(space + 1);
      const std::string prefix = "host backend: ";
      if (why.compare(0, prefix.size(), prefix) == 0) why = why.substr(prefix.size());
      throw BackendError(static_cast<BackendError::Kind>(kind),
                         prefix + "rank " + std::to_string(p) + " cannot start: " + why,
                         MakeTrace());
    }
  }

  void BuildLanes() {
    std::map<std::pair<int, int>, std::size_t> index;
    for (const Task& t : g_.tasks()) {
      if (pg_ && t.rank != pg_->rank()) continue;  // another process runs it
      auto key = std::make_pair(t.rank, t.stream);
      auto it = index.find(key);
      if (it == index.end()) {
        it = index.emplace(key, lanes_.size()).first;
        lanes_.emplace_back();
        lanes_.back().rank = t.rank;
        lanes_.back().stream = t.stream;
      }
      Lane& lane = lanes_[it->second];
      lane.tasks.push_back(t.id);
      lane.workspace_bytes = std::max(lane.workspace_bytes, WorkspaceBytes(t));
    }
    transfers_.resize(static_cast<std::size_t>(index_.transfers()));
    for (auto& tr : transfers_) {
      tr = std::make_unique<Transfer>();
      abort_.Subscribe(&tr->cv, &tr->mu);
    }
  }

  Transfer& TransferOf(const Task& t) {
    return *transfers_[static_cast<std::size_t>(index_.TransferNumber(t))];
  }

  double WorkspaceBytes(const Task& t) const {
    try {
      switch (t.kind) {
        case TaskKind::kCompute:
          return ComputeWorkspaceBytes(t);
        case TaskKind::kCollective: {
          const Collective& c = g_.collectives()[static_cast<std::size_t>(t.collective)];
          const int member = GraphIndex::Member(c, t);
          return CollectiveWorkspaceBytes(c, member) +
                 (pg_ ? ProcessCollectiveScratchBytes(c, member) : 0.0);
        }
        case TaskKind::kSend:
        case TaskKind::kRecv:
          return t.bytes;
        case TaskKind::kCopy:
          return 2 * t.bytes;
        case TaskKind::kMemory:
          return 0;
      }
    } catch (const Error& e) {
      throw BackendError(BackendError::Kind::kExecution, Describe(t) + ": " + e.what());
    }
    return 0;
  }

  void AllocateWorkspaces() {
    double total = 0;
    for (const Lane& l : lanes_) total += l.workspace_bytes;
    if (limits_.workspace_limit_bytes > 0 && total > limits_.workspace_limit_bytes) {
      const auto big = std::max_element(lanes_.begin(), lanes_.end(), [](auto& a, auto& b) {
        return a.workspace_bytes < b.workspace_bytes;
      });
      std::ostringstream m;
      m << "host backend: out of memory: the plan's task buffers need " << FormatBytes(total)
        << " in all (the largest, rank " << big->rank << " stream '" << StreamName(big->stream)
        << "', " << FormatBytes(big->workspace_bytes) << ") but this machine offers "
        << FormatBytes(limits_.workspace_limit_bytes)
        << "; plan a smaller model or micro-batch for host validation";
      throw BackendError(BackendError::Kind::kOutOfMemory, m.str());
    }
    for (Lane& l : lanes_) {
      // Whole floats plus slack, so that kernels rounding sizes down never read past the end.
      const std::size_t bytes = static_cast<std::size_t>(l.workspace_bytes) + 64;
      l.workspace.reset(new (std::nothrow) unsigned char[bytes]);
      if (!l.workspace) {
        throw BackendError(BackendError::Kind::kOutOfMemory,
                           "host backend: out of memory: cannot allocate " + FormatBytes(bytes) +
                               " of buffers for rank " + std::to_string(l.rank) + " stream '" +
                               StreamName(l.stream) + "'");
      }
      // Touch every page now, so that page faults are not timed (0x3c3c... is a normal
      // number as FP32, FP16 and BF16).
      std::memset(l.workspace.get(), 0x3c, bytes);
    }
  }

  std::string StreamName(int s) const {
    return s >= 0 && s < static_cast<int>(g_.streams().size())
               ? g_.streams()[static_cast<std::size_t>(s)]
               : std::to_string(s);
  }

  std::string Describe(const Task& t) const {
    return "task " + std::to_string(t.id) + " '" + t.name + "' (rank " + std::to_string(t.rank) +
           ", stream '" + StreamName(t.stream) + "', iteration " + std::to_string(t.iteration) +
           ")";
  }

  void LaneMain(Lane& lane, Barrier& start) {
    try {
      start.Wait(clock_);
      if (pg_) std::this_thread::sleep_until(clock_.origin());
      for (TaskId id : lane.tasks) {
        const Task& t = g_.task(id);
        WaitForDeps(t);
        try {
          RunTask(t, lane);
        } catch (const Aborted&) {
          throw;
        } catch (const Cancelled&) {
          throw;
        } catch (const BackendError&) {
          throw;
        } catch (const ProcessGroupError&) {
          throw;
        } catch (const std::bad_alloc&) {
          throw BackendError(BackendError::Kind::kOutOfMemory,
                             "host backend: out of memory in " + Describe(t));
        } catch (const std::exception& e) {
          throw BackendError(BackendError::Kind::kExecution,
                             "host backend: " + Describe(t) + " failed: " + e.what());
        }
        std::lock_guard<std::mutex> lock(mu_);
        done_[static_cast<std::size_t>(id)] = 1;
        cv_.notify_all();
      }
    } catch (const Aborted&) {
    } catch (const Cancelled&) {
    } catch (...) {
      abort_.Abort(std::current_exception());
    }
  }

  void WaitForDeps(const Task& t) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] {
      if (abort_.aborted()) return true;
      for (TaskId d : t.deps) {
        if (!done_[static_cast<std::size_t>(d)]) return false;
      }
      return true;
    });
    if (abort_.aborted()) throw Aborted{};
  }

  void RunTask(const Task& t, Lane& lane) {
    TraceRecord& rec = records_[static_cast<std::size_t>(t.id)];
    unsigned char* ws = lane.workspace.get();
    const double start = clock_.Now();
    double joined = start;
    switch (t.kind) {
      case TaskKind::kMemory:
        Account(t);
        break;
      case TaskKind::kCompute:
        RunCompute(t, ws);
        break;
      case TaskKind::kCopy:
        std::memcpy(ws + static_cast<std::size_t>(t.bytes), ws, static_cast<std::size_t>(t.bytes));
        break;
      case TaskKind::kCollective: {
        const Collective& c = g_.collectives()[static_cast<std::size_t>(t.collective)];
        if (pg_) {
          // This process's own join time; the merge of the processes' traces takes the
          // members' latest (RunOptions::processes).
          RunCollectiveOverProcesses(c, GraphIndex::Member(c, t), ws, *pg_, t.collective,
                                     WaitFor(t, std::string(ToString(c.kind))));
        } else {
          groups_[static_cast<std::size_t>(t.collective)]->Run(GraphIndex::Member(c, t), ws, clock_,
                                                               &joined);
        }
        break;
      }
      case TaskKind::kSend:
        if (pg_) {
          pg_->Send(t.peer, TransferChannel(t), ws, static_cast<std::size_t>(t.bytes),
                    WaitFor(t, "send"));
        } else {
          joined = RunSend(t, ws, start);
        }
        break;
      case TaskKind::kRecv:
        if (pg_) {
          pg_->Recv(t.peer, TransferChannel(t), ws, static_cast<std::size_t>(t.bytes),
                    WaitFor(t, "recv"));
        } else {
          joined = RunRecv(t, ws, start);
        }
        break;
    }
    const double end = t.kind == TaskKind::kMemory ? start : clock_.Now();
    rec.rank = t.rank;
    rec.stream = t.stream;
    rec.start_s = start;
    rec.peers_joined_s = std::max(start, joined);
    rec.end_s = end;
  }

  // A data-plane call's description for its error message, and the run's abort as its
  // cancellation.
  Wait WaitFor(const Task& t, const std::string& kind) {
    return Wait{kind + " '" + t.name + "' (task " + std::to_string(t.id) + ")",
                [this] { return abort_.aborted(); }};
  }

  // Channels: collective ids first, then the transfers (CheckMultiProcess keeps them below
  // the clock sync's).
  int TransferChannel(const Task& t) const {
    return static_cast<int>(g_.collectives().size()) + index_.TransferNumber(t);
  }

  void Account(const Task& t) {
    std::lock_guard<std::mutex> lock(mu_);
    double& a = allocated_[static_cast<std::size_t>(t.rank)];
    a += t.memory_delta_bytes;
    if (limits_.memory_limit_bytes_per_rank > 0 && a > limits_.memory_limit_bytes_per_rank) {
      throw BackendError(BackendError::Kind::kOutOfMemory,
                         "host backend: out of memory on rank " + std::to_string(t.rank) + ": " +
                             Describe(t) + " allocates " + FormatBytes(t.memory_delta_bytes) +
                             " (" + t.category + "), bringing the rank to " + FormatBytes(a) +
                             " of its " + FormatBytes(limits_.memory_limit_bytes_per_rank));
    }
  }

  // The sender posts its buffer and waits until the receiver has copied it.
  double RunSend(const Task& t, unsigned char* ws, double start) {
    Transfer& tr = TransferOf(t);
    std::unique_lock<std::mutex> lock(tr.mu);
    tr.src = ws;
    tr.send_start_s = start;
    tr.send_ready = true;
    tr.cv.notify_all();
    tr.cv.wait(lock, [&] { return tr.copied || abort_.aborted(); });
    if (!tr.copied) throw Aborted{};
    return tr.joined_s;
  }

  double RunRecv(const Task& t, unsigned char* ws, double start) {
    Transfer& tr = TransferOf(t);
    const unsigned char* src;
    double joined;
    {
      std::unique_lock<std::mutex> lock(tr.mu);
      tr.cv.wait(lock, [&] { return tr.send_ready || abort_.aborted(); });
      if (!tr.send_ready) throw Aborted{};
      src = tr.src;
      joined = std::max(start, tr.send_start_s);
    }
    std::memcpy(ws, src, static_cast<std::size_t>(t.bytes));
    std::lock_guard<std::mutex> lock(tr.mu);
    tr.joined_s = joined;
    tr.copied = true;
    tr.cv.notify_all();
    return joined;
  }

  ExecutionTrace MakeTrace() const {
    ExecutionTrace trace;
    trace.executor = "host";
    trace.num_ranks = g_.num_ranks();
    trace.streams = g_.streams();
    trace.records = records_;
    for (std::size_t i = 0; i < trace.records.size(); ++i) {
      TraceRecord& r = trace.records[i];
      r.rank = g_.tasks()[i].rank;
      r.stream = g_.tasks()[i].stream;
      trace.makespan_s = std::max(trace.makespan_s, r.end_s);
    }
    // As the simulator names its choices (algorithm/protocol/channels): one thread per member
    // moves whole chunks between barriers, which is NCCL's Simple protocol on one channel.
    for (const Collective& c : g_.collectives()) {
      trace.collective_algorithms.push_back(HostCollectiveAlgorithm(c.kind) + "/simple/1ch");
    }
    return trace;
  }

  [[noreturn]] void Rethrow(ExecutionTrace partial) const {
    try {
      std::rethrow_exception(abort_.error());
    } catch (const BackendError& e) {
      throw BackendError(e.kind(), e.what(), std::move(partial));
    } catch (const ProcessGroupError& e) {
      // A peer process failed, hung or died: its rank is in the message.
      throw BackendError(BackendError::Kind::kCommunication,
                         std::string("host backend: ") + e.what(), std::move(partial));
    } catch (const std::exception& e) {
      throw BackendError(BackendError::Kind::kExecution, std::string("host backend: ") + e.what(),
                         std::move(partial));
    }
  }

  const TaskGraph& g_;
  const ExecutorLimits limits_;
  ProcessGroup* const pg_;  // a multi-process run's group, else nullptr
  const GraphIndex index_;
  Clock clock_;
  AbortFlag abort_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<char> done_;
  std::vector<double> allocated_;
  std::vector<TraceRecord> records_;
  std::vector<Lane> lanes_;
  std::vector<std::unique_ptr<GroupRun>> groups_;
  std::vector<std::unique_ptr<Transfer>> transfers_;  // by GraphIndex::TransferNumber
};

}  // namespace

ExecutionTrace ExecuteOnHost(const TaskGraph& g, const ExecutorLimits& limits) {
  Execution e(g, limits);
  return e.Run();
}

}  // namespace stratasim::validate::host
