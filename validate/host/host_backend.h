// The host backend: runs a TaskGraph for real on this machine's CPU threads (backend.h has the
// contract it follows).
//
// Model of execution: every (rank, stream) pair of the graph is one thread, running its tasks
// in graph order, as a CUDA stream runs its kernels; a task waits for its dependencies (across
// streams and ranks) and then runs its real work: compute tasks Eigen GEMMs of their shape or a
// memory-bound loop over their bytes (host_kernels.h), collectives the shared-memory algorithms
// of host_collectives.h among the member threads, a send/receive pair a memcpy from the
// sender's buffer into the receiver's once both are ready (a rendezvous, as NCCL's
// send/recv), copies a memcpy. Each thread owns a workspace as large as its largest task,
// allocated and touched before the run's time origin.
//
// Multi-process (RunOptions::processes set, one process per rank, e.g. under mpirun): this
// process runs only its rank's (rank, stream) threads; collectives run the same algorithms
// over the ProcessGroup's messages (host_process_collectives.h), channel = the collective's
// id, and a send/receive pair is a Send and a Recv on channel = collectives + its transfer
// number (GraphIndex::TransferNumber); the clock sync uses the last channel. Run() refuses,
// on every process alike and before any message, a process count other than the plan's ranks
// and a dependency on another rank's task that no collective implies. Past those checks it
// makes two control-plane calls, in this order: an AllGather of each process's readiness (a
// process that cannot allocate its buffers ends the run on all, with its reason) and the
// clock sync's Broadcast (validate/clock_sync.h); trace times count from the start instant
// it agrees, which every thread waits for. A peer that fails or is silent past timeout_s()
// ends the run with BackendError kCommunication naming it; this process's other threads are
// cancelled and the partial trace keeps what they measured.
//
// Micro-benchmarks: compute tasks (and copies, and the empty task) run on every rank at once
// and report the mean over ranks, since CPU ranks share caches and the memory bus and a plan's
// ranks compute together; collectives run over ranks [0, group_size).
//
// What differs from a GPU, and is therefore what the comparison measures rather than hides:
// streams of one rank share the CPU (a communication thread's reductions take cycles a GPU's
// copy engines and NVLink would not), threads are scheduled by the OS (more threads than
// cores time-share), and kMemory tasks are accounted against the rank's memory share without
// being allocated (Linux would not back untouched pages anyway), so that a plan that does not
// fit fails like it would in training.
#ifndef STRATASIM_VALIDATE_HOST_HOST_BACKEND_H_
#define STRATASIM_VALIDATE_HOST_HOST_BACKEND_H_

#include <memory>
#include <string>

#include "validate/backend.h"
#include "validate/host/host_machine.h"

namespace stratasim::validate {

struct HostBackendOptions {
  // Ranks (threads) offered; 0 = the machine's hardware threads. More than the cores is
  // allowed (the OS time-shares them), and the comparison then shows the slowdown.
  int ranks = 0;
  // When set, used instead of probing this machine (tests, and runs that must describe the
  // same machine twice).
  std::shared_ptr<const host::HostMachine> machine;
};

class HostBackend : public Backend {
 public:
  explicit HostBackend(const HostBackendOptions& options);

  std::string Name() const override { return "host"; }
  int NumRanks() const override { return ranks_; }
  ClusterSpec Describe() const override;
  const host::HostMachine& machine() const { return *machine_; }

  ExecutionTrace Run(const TaskGraph& g, const RunOptions& options) override;

  BenchResult TimeCompute(const Task& task, const BenchOptions& options) override;
  BenchResult TimeLaunch(const BenchOptions& options) override;
  BenchResult TimeCopy(double bytes, CopyDirection direction, const BenchOptions& options) override;
  BenchResult TimeCollective(CollectiveKind kind, int group_size, double bytes, DType dtype,
                             const BenchOptions& options) override;

 private:
  int ranks_;
  std::shared_ptr<const host::HostMachine> machine_;
};

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_HOST_HOST_BACKEND_H_
