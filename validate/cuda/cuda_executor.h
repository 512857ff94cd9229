// Runs a TaskGraph on CUDA devices: the engine behind CudaBackend::Run (backend.h has the
// contract).
//
// Model of execution: rank r runs on device r, driven by one host thread that walks the rank's
// tasks in graph order and enqueues each on the CUDA stream of its graph stream (one
// cudaStream_t per (rank, stream)), so that the GPU, not the host, decides when it runs:
//   - dependencies on another stream or rank: cudaStreamWaitEvent on the end event of the
//     dependency (events work across devices of one process); the host thread first waits
//     until the other rank's thread has enqueued that event.
//   - compute: the kernel of task_kernels.h; collectives and all-to-all(v): NCCL on the clique
//     of the group (nccl_ops.h); send/recv: ncclSend/ncclRecv on a clique of all ranks;
//     copies: cudaMemcpyAsync between pinned host memory and the device; memory tasks:
//     cudaMallocAsync/cudaFreeAsync of the delta, stream-ordered from the device's pool (kept
//     by the pool once freed, like PyTorch's caching allocator), so a plan that does not fit
//     fails with out-of-memory here as it would in training.
//   - timing: a CUDA event before and after every task on its stream. Times are relative to
//     an origin event recorded on each device after all devices idled at a host barrier; the
//     devices' origins are aligned by the host clock at that barrier (a few microseconds).
// Buffers: each rank owns scratch buffers as large as its largest task of each kind (compute:
// per stream, with a cuBLAS handle and workspace per stream), allocated and filled before the
// origin; tasks share them (contents do not change the timing of these kernels and transfers,
// and real training keeps its weights and activations in memory the kMemory tasks account).
//
// Multi-process (CudaRunLimits::processes, one process per GPU under mpirun): this process
// runs only rank processes->rank(), on the device and with the communicators of NcclBootstrap
// (nccl_bootstrap.h). What differs:
//   - a dependency on another rank's task (another process) is a one-byte message over the
//     process group, sent once the task's end event completed and awaited by the host thread
//     before it enqueues the dependent task (a host round trip where one process would wait on
//     the event on the GPU);
//   - times count from the common start instant of the processes (CudaRunLimits::common_start):
//     the origin event's host time is measured against it;
//   - while the GPU works, the main thread watches: a stream with enqueued work that finishes
//     no task for processes->timeout_s(), or an NCCL communicator reporting an asynchronous
//     error, aborts the communicators and ends the run with a BackendError (kCommunication)
//     naming the rank and the collective or transfer it was stuck in.
//
// Limits: ranks <= visible devices in one process; tasks that share a communicator clique
// must run on the same stream of each rank (the key includes the streams, so this holds by
// construction).
#ifndef STRATASIM_VALIDATE_CUDA_CUDA_EXECUTOR_H_
#define STRATASIM_VALIDATE_CUDA_CUDA_EXECUTOR_H_

#include <chrono>
#include <cstdint>
#include <functional>

#include "core/task_graph.h"
#include "core/trace.h"
#include "validate/process_group.h"

namespace stratasim::validate::cuda {

struct CudaRunLimits {
  int devices = 0;  // visible devices; rank r runs on device r
  // Largest total of kMemory allocations per rank (0 = what the device allows).
  double memory_limit_bytes_per_rank = 0;
  std::uint64_t seed = 0;  // buffer contents
  // A multi-process run: this process runs rank processes->rank() only (the graph must have
  // processes->size() ranks). nullptr: this process runs every rank, rank r on device r.
  ProcessGroup* processes = nullptr;
  // Multi-process: called on every process once all are set up, returns the instant (in this
  // process's steady clock) common to all processes from which the trace's times count
  // (validate/clock_sync.h).
  std::function<std::chrono::steady_clock::time_point()> common_start;
};

// Throws BackendError (kTooFewRanks, kOutOfMemory, kCommunication, kExecution) with the trace
// of every task that completed before the failure.
ExecutionTrace ExecuteOnCuda(const TaskGraph& g, const CudaRunLimits& limits);

}  // namespace stratasim::validate::cuda

#endif  // STRATASIM_VALIDATE_CUDA_CUDA_EXECUTOR_H_
