#include "validate/cuda/cuda_executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/graph_index.h"
#include "kernels/cuda_check.h"
#include "kernels/device_buffer.h"
#include "kernels/gemm.h"
#include "validate/backend.h"
#include "validate/cuda/nccl_bootstrap.h"
#include "validate/cuda/nccl_ops.h"
#include "validate/cuda/task_kernels.h"
#include "validate/stream_priorities.h"

namespace stratasim::validate::cuda {
namespace {

using Clock = std::chrono::steady_clock;
using kernels::DeviceBuffer;
using kernels::PinnedBuffer;

// How long the GPUs may take to drain after the last task was enqueued before the run is
// declared hung (a collective whose peers never come) and its communicators are aborted.
constexpr double kDrainTimeoutS = 600;
// A multi-process run, once its communicators are aborted: how long its streams may take to
// drain before the run ends without them. ncclCommAbort makes NCCL's kernels return (NCCL
// user guide, "Fault tolerance"), so this is a bound, not an expected wait.
constexpr double kAbortDrainS = 10;
// How long a multi-process run's worker thread, told to stop, may take before the
// communicators are aborted under it (it is then blocked in an NCCL call).
constexpr double kWorkerStopS = 1;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The process-group channel of the message that says task `id` ended; kMaxChannel itself is
// left to the clock synchronisation (validate/clock_sync.h).
int Channel(TaskId id) { return static_cast<int>(id % ProcessGroup::kMaxChannel); }

std::string FormatS(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

double Seconds(Clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

std::size_t Bytes(double b) { return static_cast<std::size_t>(std::ceil(std::max(0.0, b))); }

std::string Gib(double bytes) { return std::to_string(bytes / (1024.0 * 1024 * 1024)) + " GiB"; }

// What one rank (device, host thread) owns.
struct RankState {
  // Members free device resources: make this rank's device current for them.
  ~RankState() {
    if (device >= 0) cudaSetDevice(device);
  }

  int rank = 0;
  int device = -1;                    // -1: another process runs this rank
  std::vector<cudaStream_t> streams;  // by graph stream index; nullptr where unused
  // Per graph stream that runs compute tasks: its own cuBLAS handle and workspace (cuBLAS
  // kernels on concurrent streams must not share a workspace: stream-K GEMMs keep counters in
  // it) and its own scratch buffers.
  std::vector<std::unique_ptr<kernels::Blas>> blas;
  std::vector<std::unique_ptr<KernelLauncher>> launchers;
  DeviceBuffer coll_send, coll_recv, p2p, copy_device;
  PinnedBuffer copy_host;
  double need_coll_send = 0, need_coll_recv = 0, need_p2p = 0, need_copy = 0;
  std::vector<std::pair<void*, double>> ledger;  // kMemory allocations, in order
  double allocated = 0;
  cudaEvent_t origin = nullptr;
  double origin_host_s = 0;
};

class CudaRun {
 public:
  CudaRun(const TaskGraph& g, const CudaRunLimits& limits)
      : g_(g),
        limits_(limits),
        ranks_(g.num_ranks()),
        start_(g.tasks().size()),
        end_(g.tasks().size()),
        recorded_(g.tasks().size()),
        enqueued_(g.tasks().size()),
        plans_(g.tasks().size()),
        index_(g),
        clique_(g.tasks().size(), nullptr),
        pg_(limits.processes),
        notify_(g.tasks().size()) {}

  ~CudaRun() { Release(); }

  ExecutionTrace Execute();

 private:
  void Prepare();
  void BuildCliques();
  template <typename F>
  void Guard(int r, F&& body);
  void RankMain(int r);
  void RecordOrigin(RankState& s);
  void EnqueueAll(int r);
  // Multi-process (CudaRunLimits::processes).
  ExecutionTrace ExecuteProcess();
  void AgreeSetUp();
  void WaitRemote(const Task& t, const Task& dep);
  void Notify(TaskId id);
  void Watch(RankState& s);
  std::string What(const Task& t) const;
  void SetUp(RankState& s);
  void Enqueue(RankState& s, const Task& t);
  void Memory(RankState& s, const Task& t, cudaStream_t stream);
  void WaitEnqueued(TaskId dep);
  bool Barrier();
  void Fail(BackendError::Kind kind, const std::string& message);
  void Drain();
  ExecutionTrace Trace() const;
  void Release();

  const TaskGraph& g_;
  const CudaRunLimits limits_;
  std::vector<RankState> ranks_;
  std::vector<cudaEvent_t> start_, end_;
  std::vector<char> recorded_;
  std::vector<std::atomic<bool>> enqueued_;
  std::vector<KernelPlan> plans_;
  const GraphIndex index_;          // transfers' ends, collective members
  std::vector<ncclComm_t> clique_;  // per collective member / send / recv task
  Communicators comms_;
  CommPlan plan_;
  std::vector<int> local_;  // the ranks this process runs
  double host0_s_ = 0;      // the host time the trace's times count from

  // Multi-process.
  ProcessGroup* const pg_;
  std::unique_ptr<NcclBootstrap> bootstrap_;
  std::vector<std::vector<int>> notify_;  // per task: the other ranks that depend on it
  std::set<TaskId> arrived_;              // remote dependencies received (the enqueuing thread)
  std::atomic<bool> worker_done_{false};
  std::atomic<TaskId> enqueuing_{-1};  // the task being enqueued (a blocking NCCL call?)

  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> abort_{false};
  int barrier_count_ = 0;
  int barrier_generation_ = 0;
  bool failed_ = false;
  BackendError::Kind kind_ = BackendError::Kind::kExecution;
  std::string message_;
};

void CudaRun::Fail(BackendError::Kind kind, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_) {
      failed_ = true;
      kind_ = kind;
      message_ = message;
    }
    abort_ = true;  // under the lock: a waiter cannot miss it between its check and its wait
  }
  cv_.notify_all();
}

bool CudaRun::Barrier() {
  std::unique_lock<std::mutex> lock(mu_);
  const int generation = barrier_generation_;
  if (++barrier_count_ == static_cast<int>(local_.size())) {
    barrier_count_ = 0;
    ++barrier_generation_;
    cv_.notify_all();
  } else {
    cv_.wait(lock, [&] { return barrier_generation_ != generation || abort_; });
  }
  return !abort_;
}

void CudaRun::WaitEnqueued(TaskId dep) {
  if (enqueued_[dep]) return;
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return enqueued_[dep].load() || abort_.load(); });
}

void CudaRun::Prepare() {
  for (std::size_t r = 0; r < ranks_.size(); ++r) ranks_[r].rank = static_cast<int>(r);
  for (const Task& t : g_.tasks()) {
    RankState& s = ranks_[t.rank];
    switch (t.kind) {
      case TaskKind::kCompute:
        plans_[t.id] = PlanKernel(t);
        break;
      case TaskKind::kCollective: {
        const auto [send, recv] = CollectiveBufferBytes(g_.collectives()[t.collective]);
        s.need_coll_send = std::max(s.need_coll_send, send);
        s.need_coll_recv = std::max(s.need_coll_recv, recv);
        break;
      }
      case TaskKind::kSend:
      case TaskKind::kRecv:
        s.need_p2p = std::max(s.need_p2p, t.bytes);
        break;
      case TaskKind::kCopy:
        s.need_copy = std::max(s.need_copy, t.bytes);
        break;
      case TaskKind::kMemory:
        break;
    }
  }
}

void CudaRun::BuildCliques() {
  for (const Task& t : g_.tasks()) {
    const int gi = plan_.group_of_task[t.id];
    if (gi < 0) continue;
    const CommGroup& group = plan_.groups[gi];
    // One process: member i of a clique runs on device ranks[i].
    clique_[t.id] = comms_.Clique(group.key, group.ranks)[plan_.member_of_task[t.id]];
  }
}

void CudaRun::SetUp(RankState& s) {
  STRATASIM_CUDA_CHECK(cudaSetDevice(s.device));
  // Keep freed pool memory in the pool during the run (no OS round trips inside timed work).
  cudaMemPool_t pool;
  STRATASIM_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, s.device));
  std::uint64_t threshold = UINT64_MAX;
  STRATASIM_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  s.streams.assign(g_.streams().size(), nullptr);
  // Stream priorities (TaskGraph::SetStreamPriority) become CUDA stream priorities: the
  // block scheduler then dispatches a more urgent stream's pending kernels (NCCL's included)
  // first. A graph without priorities creates its streams as before.
  std::vector<int> cuda_priority;
  if (g_.has_stream_priorities()) {
    int least = 0, greatest = 0;
    STRATASIM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cuda_priority = CudaStreamPriorities(g_.stream_priorities(), least, greatest);
  }
  for (const Task& t : g_.tasks()) {
    if (t.rank != s.rank) continue;
    if (s.streams[t.stream] == nullptr) {
      if (cuda_priority.empty()) {
        STRATASIM_CUDA_CHECK(
            cudaStreamCreateWithFlags(&s.streams[t.stream], cudaStreamNonBlocking));
      } else {
        STRATASIM_CUDA_CHECK(cudaStreamCreateWithPriority(
            &s.streams[t.stream], cudaStreamNonBlocking, cuda_priority[t.stream]));
      }
    }
    STRATASIM_CUDA_CHECK(cudaEventCreate(&start_[t.id]));
    STRATASIM_CUDA_CHECK(cudaEventCreate(&end_[t.id]));
  }
  s.blas.resize(g_.streams().size());
  s.launchers.resize(g_.streams().size());
  for (const Task& t : g_.tasks()) {
    if (t.rank != s.rank || t.kind != TaskKind::kCompute) continue;
    if (!s.launchers[t.stream]) {
      s.blas[t.stream] = std::make_unique<kernels::Blas>();
      s.launchers[t.stream] = std::make_unique<KernelLauncher>(*s.blas[t.stream]);
    }
    s.launchers[t.stream]->Reserve(plans_[t.id]);
  }
  for (std::size_t st = 0; st < s.launchers.size(); ++st) {
    if (s.launchers[st])
      s.launchers[st]->Allocate(limits_.seed + 1000003ULL * s.rank + 7 * st, nullptr);
  }
  s.coll_send = DeviceBuffer(Bytes(s.need_coll_send));
  s.coll_recv = DeviceBuffer(Bytes(s.need_coll_recv));
  s.p2p = DeviceBuffer(Bytes(s.need_p2p));
  s.copy_device = DeviceBuffer(Bytes(s.need_copy));
  s.copy_host = PinnedBuffer(Bytes(s.need_copy));
  STRATASIM_CUDA_CHECK(cudaEventCreate(&s.origin));
  STRATASIM_CUDA_CHECK(cudaDeviceSynchronize());
}

void CudaRun::Memory(RankState& s, const Task& t, cudaStream_t stream) {
  if (t.memory_delta_bytes > 0) {
    const double limit = limits_.memory_limit_bytes_per_rank;
    if (limit > 0 && s.allocated + t.memory_delta_bytes > limit) {
      throw BackendError(BackendError::Kind::kOutOfMemory,
                         "rank " + std::to_string(s.rank) + ": task " + std::to_string(t.id) +
                             " '" + t.name + "' allocates " + Gib(t.memory_delta_bytes) +
                             " on top of " + Gib(s.allocated) + ": over the limit of " +
                             Gib(limit) + " per rank");
    }
    void* p = nullptr;
    const cudaError_t err = cudaMallocAsync(&p, Bytes(t.memory_delta_bytes), stream);
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw BackendError(BackendError::Kind::kOutOfMemory,
                         "rank " + std::to_string(s.rank) + " (device " + std::to_string(s.device) +
                             "): task " + std::to_string(t.id) + " '" + t.name + "' allocates " +
                             Gib(t.memory_delta_bytes) + " on top of " + Gib(s.allocated) +
                             " held by the plan: " +
                             (err == cudaErrorMemoryAllocation ? "out of device memory"
                                                               : cudaGetErrorString(err)));
    }
    s.ledger.emplace_back(p, t.memory_delta_bytes);
    s.allocated += t.memory_delta_bytes;
    return;
  }
  // A free: release the latest allocations (LIFO, as activations are freed in reverse);
  // a block larger than what is left to free is replaced by one of its remainder.
  double left = -t.memory_delta_bytes;
  while (left > 0 && !s.ledger.empty()) {
    auto [p, size] = s.ledger.back();
    s.ledger.pop_back();
    STRATASIM_CUDA_CHECK(cudaFreeAsync(p, stream));
    s.allocated -= size;
    if (size > left) {
      void* rest = nullptr;
      STRATASIM_CUDA_CHECK(cudaMallocAsync(&rest, Bytes(size - left), stream));
      s.ledger.emplace_back(rest, size - left);
      s.allocated += size - left;
      left = 0;
    } else {
      left -= size;
    }
  }
}

void CudaRun::Enqueue(RankState& s, const Task& t) {
  cudaStream_t stream = s.streams[t.stream];
  for (TaskId dep : t.deps) {
    const Task& d = g_.task(dep);
    if (d.rank == t.rank && d.stream == t.stream) continue;  // stream order
    if (d.rank != t.rank && pg_ != nullptr) {                // another process's task: its message
      WaitRemote(t, d);
      if (abort_) return;
      continue;
    }
    if (d.rank != t.rank) WaitEnqueued(dep);
    if (abort_) return;
    STRATASIM_CUDA_CHECK(cudaStreamWaitEvent(stream, end_[dep], 0));
  }
  enqueuing_ = t.id;
  STRATASIM_CUDA_CHECK(cudaEventRecord(start_[t.id], stream));
  switch (t.kind) {
    case TaskKind::kCompute:
      s.launchers[t.stream]->Launch(plans_[t.id], stream);
      break;
    case TaskKind::kCollective: {
      const Collective& c = g_.collectives()[t.collective];
      EnqueueCollective(c, GraphIndex::Member(c, t), clique_[t.id], s.coll_send.get(),
                        s.coll_recv.get(), stream);
      break;
    }
    case TaskKind::kSend:
      STRATASIM_NCCL_CHECK(
          ncclSend(s.p2p.get(), Bytes(t.bytes), ncclInt8, t.peer, clique_[t.id], stream));
      break;
    case TaskKind::kRecv:
      STRATASIM_NCCL_CHECK(
          ncclRecv(s.p2p.get(), Bytes(t.bytes), ncclInt8, t.peer, clique_[t.id], stream));
      break;
    case TaskKind::kCopy:
      if (t.bytes > 0) {
        const bool h2d = t.copy == CopyDirection::kHostToDevice;
        STRATASIM_CUDA_CHECK(
            cudaMemcpyAsync(h2d ? s.copy_device.get() : s.copy_host.get(),
                            h2d ? s.copy_host.get() : s.copy_device.get(), Bytes(t.bytes),
                            h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream));
      }
      break;
    case TaskKind::kMemory:
      Memory(s, t, stream);
      break;
  }
  STRATASIM_CUDA_CHECK(cudaEventRecord(end_[t.id], stream));
  recorded_[t.id] = 1;
  enqueuing_ = -1;
}

// Runs `body` for rank r, turning what it throws into the run's failure.
template <typename F>
void CudaRun::Guard(int r, F&& body) {
  try {
    body();
  } catch (const BackendError& e) {
    Fail(e.kind(), e.what());
  } catch (const kernels::DeviceError& e) {  // set-up: streams, events, NCCL buffers
    Fail(e.out_of_memory() ? BackendError::Kind::kOutOfMemory : BackendError::Kind::kExecution,
         "rank " + std::to_string(r) + ": " + e.what());
  } catch (const std::exception& e) {
    Fail(BackendError::Kind::kExecution, "rank " + std::to_string(r) + ": " + e.what());
  }
}

void CudaRun::RecordOrigin(RankState& s) {
  STRATASIM_CUDA_CHECK(cudaSetDevice(s.device));
  STRATASIM_CUDA_CHECK(cudaEventRecord(s.origin, nullptr));
  STRATASIM_CUDA_CHECK(cudaEventSynchronize(s.origin));
  s.origin_host_s = Seconds(Clock::now());
}

void CudaRun::RankMain(int r) {
  RankState& s = ranks_[r];
  Guard(r, [&] {
    SetUp(s);
    if (!Barrier()) return;
    // Common origin: every device idle, each records its origin as the host barrier opens.
    RecordOrigin(s);
    if (!Barrier()) return;
    EnqueueAll(r);
  });
}

void CudaRun::EnqueueAll(int r) {
  for (const Task& t : g_.tasks()) {
    if (abort_) return;
    if (t.rank != r) continue;
    try {
      Enqueue(ranks_[r], t);
    } catch (const BackendError&) {
      throw;
    } catch (const Error& e) {
      const auto* device = dynamic_cast<const kernels::DeviceError*>(&e);
      const bool oom = device != nullptr && device->out_of_memory();
      throw BackendError(oom ? BackendError::Kind::kOutOfMemory : BackendError::Kind::kExecution,
                         "rank " + std::to_string(r) + ": task " + std::to_string(t.id) + " '" +
                             t.name + "': " + e.what());
    }
    {
      std::lock_guard<std::mutex> lock(mu_);  // see Fail: no lost wake-up
      enqueued_[t.id] = true;
    }
    cv_.notify_all();
  }
}

// Waits for every device to finish, polling so that a hung collective can be aborted.
void CudaRun::Drain() {
  const Clock::time_point deadline =
      Clock::now() +
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kDrainTimeoutS));
  for (int r : local_) {
    RankState& s = ranks_[r];
    cudaSetDevice(s.device);
    for (cudaStream_t st : s.streams) {
      if (st == nullptr) continue;
      while (true) {
        const cudaError_t q = cudaStreamQuery(st);
        if (q == cudaSuccess) break;
        if (q != cudaErrorNotReady) {
          cudaGetLastError();
          // A stream-ordered allocation may report its failure only when the stream runs.
          Fail(q == cudaErrorMemoryAllocation ? BackendError::Kind::kOutOfMemory
                                              : BackendError::Kind::kExecution,
               "rank " + std::to_string(s.rank) + ": the device reported " + cudaGetErrorString(q));
          break;
        }
        if (Clock::now() > deadline) {
          Fail(BackendError::Kind::kCommunication,
               "rank " + std::to_string(s.rank) + ": tasks still running " +
                   std::to_string(kDrainTimeoutS) +
                   " s after the last was enqueued (a collective or transfer whose peers never "
                   "joined?); NCCL communicators aborted");
          comms_.AbortAll();
          break;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
  }
}

ExecutionTrace CudaRun::Execute() {
  if (pg_ != nullptr) return ExecuteProcess();
  if (g_.num_ranks() > limits_.devices) {
    throw BackendError(BackendError::Kind::kTooFewRanks,
                       "the plan needs " + std::to_string(g_.num_ranks()) +
                           " ranks (one CUDA device each) but this machine has " +
                           std::to_string(limits_.devices) +
                           " visible CUDA device(s): validate runs plans at the size the "
                           "devices allow (ranks <= devices)");
  }
  Prepare();
  plan_ = PlanCommunicators(g_);
  for (int r = 0; r < g_.num_ranks(); ++r) {
    local_.push_back(r);
    ranks_[r].device = r;
  }
  BuildCliques();
  std::vector<std::thread> threads;
  for (int r = 0; r < g_.num_ranks(); ++r) threads.emplace_back([this, r] { RankMain(r); });
  for (std::thread& t : threads) t.join();
  if (failed_) comms_.AbortAll();  // unblock NCCL kernels waiting for peers that stopped
  Drain();
  host0_s_ = ranks_.empty() ? 0 : ranks_[0].origin_host_s;
  ExecutionTrace trace = Trace();
  if (failed_) throw BackendError(kind_, message_, trace);
  return trace;
}

// ---- Multi-process: this process runs rank pg_->rank() only. ----

ExecutionTrace CudaRun::ExecuteProcess() {
  const int r = pg_->rank();
  if (g_.num_ranks() != pg_->size()) {
    throw BackendError(BackendError::Kind::kTooFewRanks,
                       "the plan has " + std::to_string(g_.num_ranks()) +
                           " ranks but the run has " + std::to_string(pg_->size()) +
                           " processes: a multi-process cuda run takes one process per rank "
                           "(mpirun -np " +
                           std::to_string(g_.num_ranks()) + ")");
  }
  Prepare();
  plan_ = PlanCommunicators(g_);
  // Collective over the processes: every one builds the same communicators in the same order.
  bootstrap_ = std::make_unique<NcclBootstrap>(*pg_, RealNcclCalls(), plan_.groups);
  RankState& s = ranks_[r];
  s.device = bootstrap_->device();
  local_ = {r};
  for (const Task& t : g_.tasks()) {
    if (t.rank == r && plan_.group_of_task[t.id] >= 0) {
      clique_[t.id] = static_cast<ncclComm_t>(bootstrap_->group(plan_.group_of_task[t.id]));
    }
    for (TaskId dep : t.deps) {
      const Task& d = g_.task(dep);
      if (d.rank != r || t.rank == r) continue;
      std::vector<int>& to = notify_[dep];
      if (std::find(to.begin(), to.end(), t.rank) == to.end()) to.push_back(t.rank);
    }
  }
  Guard(r, [&] { SetUp(s); });
  AgreeSetUp();  // throws on every process when one failed, before any collective is enqueued
  const Clock::time_point start = limits_.common_start ? limits_.common_start() : Clock::now();
  host0_s_ = Seconds(start);
  Guard(r, [&] { RecordOrigin(s); });
  std::thread worker([this, r] {
    if (!abort_) Guard(r, [&] { EnqueueAll(r); });
    worker_done_ = true;
  });
  try {
    Watch(s);
  } catch (const std::exception& e) {  // the worker must still be joined
    Fail(BackendError::Kind::kExecution, "rank " + std::to_string(r) + ": " + e.what());
  }
  worker.join();
  ExecutionTrace trace = Trace();
  if (failed_) throw BackendError(kind_, message_, trace);
  return trace;
}

void CudaRun::AgreeSetUp() {
  // "kind index:message" of this process's failure, or "".
  const std::string mine =
      failed_ ? std::to_string(static_cast<int>(kind_)) + ":" + message_ : std::string();
  std::vector<std::string> all;
  try {
    all = pg_->AllGather(mine);
  } catch (const ProcessGroupError& e) {
    throw BackendError(BackendError::Kind::kCommunication,
                       "rank " + std::to_string(pg_->rank()) +
                           ": setting up the cuda run: no answer from rank " +
                           std::to_string(e.peer()) + ": " + e.what());
  }
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty()) continue;
    const std::size_t colon = all[r].find(':');
    const int kind = std::atoi(all[r].substr(0, colon).c_str());
    const std::string message = colon == std::string::npos ? all[r] : all[r].substr(colon + 1);
    // The message of a rank's own failure starts "rank R: ..."; another's is named here.
    throw BackendError(static_cast<BackendError::Kind>(kind),
                       static_cast<int>(r) == pg_->rank()
                           ? message
                           : "rank " + std::to_string(r) + " failed to set up: " + message);
  }
}

void CudaRun::WaitRemote(const Task& t, const Task& dep) {
  if (!arrived_.insert(dep.id).second) return;
  char byte = 0;
  const Wait wait{"task " + std::to_string(t.id) + " '" + t.name +
                      "' waiting for the end of task " + std::to_string(dep.id) + " '" + dep.name +
                      "' of rank " + std::to_string(dep.rank),
                  [this] { return abort_.load(); }};
  try {
    pg_->Recv(dep.rank, Channel(dep.id), &byte, 1, wait);
  } catch (const Cancelled&) {
    // abort_ is set: the run is already ending with another error.
  } catch (const ProcessGroupError& e) {
    throw BackendError(BackendError::Kind::kCommunication,
                       "rank " + std::to_string(t.rank) + ": " + e.what());
  }
}

void CudaRun::Notify(TaskId id) {
  const char byte = 1;
  for (int to : notify_[id]) {
    const Task& t = g_.task(id);
    const Wait wait{"telling rank " + std::to_string(to) + " that task " + std::to_string(id) +
                        " '" + t.name + "' ended",
                    [this] { return abort_.load(); }};
    try {
      pg_->Send(to, Channel(id), &byte, 1, wait);
    } catch (const Cancelled&) {
      return;
    } catch (const ProcessGroupError& e) {
      Fail(BackendError::Kind::kCommunication, "rank " + std::to_string(t.rank) + ": " + e.what());
      return;
    }
  }
}

std::string CudaRun::What(const Task& t) const {
  const std::string id = " (task " + std::to_string(t.id) + ")";
  switch (t.kind) {
    case TaskKind::kCollective:
      return std::string(ToString(g_.collectives()[t.collective].kind)) + " '" + t.name + "'" + id;
    case TaskKind::kSend:
      return "send '" + t.name.str() + "'" + id + " to rank " + std::to_string(t.peer);
    case TaskKind::kRecv:
      return "recv '" + t.name.str() + "'" + id + " from rank " + std::to_string(t.peer);
    default:
      return "task " + std::to_string(t.id) + " '" + t.name + "'";
  }
}

// The main thread of a multi-process run, while the worker enqueues: sees tasks end (telling
// the ranks that wait for them), and ends the run when the device or NCCL fails or when work
// stops progressing for the process group's timeout.
void CudaRun::Watch(RankState& s) {
  const int r = s.rank;
  const double timeout_s = pg_->timeout_s();
  cudaSetDevice(s.device);
  std::vector<std::vector<TaskId>> order(g_.streams().size());
  for (const Task& t : g_.tasks()) {
    if (t.rank == r) order[t.stream].push_back(t.id);
  }
  std::vector<std::size_t> next(order.size(), 0);
  Clock::time_point last_progress = Clock::now(), aborted_at{};
  bool aborted = false, abort_seen = false;
  Clock::time_point abort_seen_at{};
  while (true) {
    // Read before the scan: a task the worker enqueues after it is seen on the next round.
    const bool worker_done = worker_done_;
    bool progressed = false;
    TaskId stuck = -1;  // an enqueued task not finished; a communication one if any
    for (std::size_t st = 0; st < order.size(); ++st) {
      while (next[st] < order[st].size()) {
        const TaskId id = order[st][next[st]];
        if (!enqueued_[id]) break;
        const cudaError_t q = cudaEventQuery(end_[id]);
        if (q != cudaSuccess) {
          if (q != cudaErrorNotReady) {
            cudaGetLastError();
            Fail(q == cudaErrorMemoryAllocation ? BackendError::Kind::kOutOfMemory
                                                : BackendError::Kind::kExecution,
                 "rank " + std::to_string(r) + ": the device reported " + cudaGetErrorString(q) +
                     " in " + What(g_.task(id)));
          }
          if (stuck < 0 || plan_.group_of_task[id] >= 0) stuck = id;
          break;
        }
        ++next[st];
        progressed = true;
        if (!aborted) Notify(id);
      }
    }
    if (progressed) last_progress = Clock::now();
    if (worker_done && stuck < 0) break;  // all enqueued work finished
    if (!aborted) {
      for (NcclComm c : bootstrap_->all()) {
        ncclResult_t state = ncclSuccess;
        if (ncclCommGetAsyncError(static_cast<ncclComm_t>(c), &state) != ncclSuccess) continue;
        if (state == ncclSuccess || state == ncclInProgress) continue;
        Fail(BackendError::Kind::kCommunication,
             "rank " + std::to_string(r) + ": NCCL reported " + NcclErrorText(state) +
                 (stuck >= 0 ? " in " + What(g_.task(stuck)) : std::string()));
        break;
      }
      const TaskId busy = stuck >= 0 ? stuck : enqueuing_.load();
      if (busy >= 0 && Since(last_progress) > timeout_s) {
        const Task& t = g_.task(busy);
        Fail(BackendError::Kind::kCommunication,
             plan_.group_of_task[busy] >= 0
                 ? "NCCL timed out after " + FormatS(timeout_s) + " s in " + What(t) + " on rank " +
                       std::to_string(r) +
                       " (no task of this rank finished since; a peer stopped or hangs: "
                       "communicators aborted)"
                 : "rank " + std::to_string(r) + ": " + What(t) + " did not finish within " +
                       FormatS(timeout_s) + " s (communicators aborted)");
      }
      if (abort_ && !abort_seen) {
        abort_seen = true;
        abort_seen_at = Clock::now();
      }
      // Unblocks NCCL kernels and calls waiting for peers that stopped, here and in the worker
      // thread. An aborted communicator is freed: abort once the worker stopped (it checks
      // abort_ before each task), or once it had the time to, when it is blocked in NCCL.
      if (abort_seen && (worker_done_ || Since(abort_seen_at) > kWorkerStopS)) {
        aborted = true;
        aborted_at = Clock::now();
        bootstrap_->AbortAll();
        cv_.notify_all();
      }
    } else if (Since(aborted_at) > kAbortDrainS && worker_done_) {
      break;  // streams that do not drain after the abort: the trace keeps what finished
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

ExecutionTrace CudaRun::Trace() const {
  ExecutionTrace trace;
  trace.executor = "cuda";
  trace.num_ranks = g_.num_ranks();
  trace.streams = g_.streams();
  trace.collective_algorithms.assign(g_.collectives().size(), "");
  trace.records.resize(g_.tasks().size());
  std::vector<char> done(g_.tasks().size(), 0);
  const double host0 = host0_s_;
  for (const Task& t : g_.tasks()) {
    TraceRecord& rec = trace.records[t.id];
    rec.task = t.id;
    rec.rank = t.rank;
    rec.stream = t.stream;
    rec.start_s = rec.end_s = rec.peers_joined_s = -1;
    const RankState& s = ranks_[t.rank];
    if (s.device < 0 || !recorded_[t.id] || s.origin == nullptr) continue;
    cudaSetDevice(s.device);
    if (cudaEventQuery(end_[t.id]) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    float start_ms = 0, end_ms = 0;
    if (cudaEventElapsedTime(&start_ms, s.origin, start_[t.id]) != cudaSuccess ||
        cudaEventElapsedTime(&end_ms, s.origin, end_[t.id]) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    const double offset = s.origin_host_s - host0;
    rec.start_s = offset + start_ms * 1e-3;
    rec.end_s = std::max(rec.start_s, offset + end_ms * 1e-3);
    rec.peers_joined_s = rec.start_s;
    if (t.kind == TaskKind::kMemory) rec.end_s = rec.start_s;
    done[t.id] = 1;
    trace.makespan_s = std::max(trace.makespan_s, rec.end_s);
  }
  // Peers joined when the last member's stream reached the collective (or both ends of a
  // transfer were ready), as the simulator defines it.
  for (const Collective& c : g_.collectives()) {
    double joined = 0;
    bool all = true;
    for (TaskId m : c.members) {
      all = all && done[m];
      joined = std::max(joined, trace.records[m].start_s);
    }
    if (!all) continue;
    for (TaskId m : c.members) trace.records[m].peers_joined_s = joined;
  }
  for (const Task& t : g_.tasks()) {
    if (t.kind != TaskKind::kSend && t.kind != TaskKind::kRecv) continue;
    const TaskId p = index_.Peer(t);
    if (p < 0 || !done[t.id] || !done[p]) continue;
    trace.records[t.id].peers_joined_s =
        std::max(trace.records[t.id].start_s, trace.records[p].start_s);
  }
  return trace;
}

void CudaRun::Release() {
  for (RankState& s : ranks_) {
    if (s.device < 0 || cudaSetDevice(s.device) != cudaSuccess) continue;
    cudaDeviceSynchronize();
    for (auto& [p, size] : s.ledger) cudaFree(p);
    s.ledger.clear();
    for (cudaStream_t st : s.streams) {
      if (st != nullptr) cudaStreamDestroy(st);
    }
    s.streams.clear();
    if (s.origin != nullptr) cudaEventDestroy(s.origin);
    s.origin = nullptr;
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, s.device) == cudaSuccess) cudaMemPoolTrimTo(pool, 0);
  }
  for (std::size_t i = 0; i < start_.size(); ++i) {
    if (start_[i] != nullptr) cudaEventDestroy(start_[i]);
    if (end_[i] != nullptr) cudaEventDestroy(end_[i]);
    start_[i] = end_[i] = nullptr;
  }
  cudaGetLastError();
}

}  // namespace

ExecutionTrace ExecuteOnCuda(const TaskGraph& g, const CudaRunLimits& limits) {
  CudaRun run(g, limits);
  return run.Execute();
}

}  // namespace stratasim::validate::cuda
