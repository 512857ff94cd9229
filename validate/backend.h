// The interface of validate mode's real executors: the one thing the `validate` and `calibrate`
// commands know about a backend. Two implementations: `host` (validate/host/: CPU threads, one
// per rank, Eigen GEMMs, collectives through shared memory; always built, runs in CI) and
// `cuda` (validate/cuda/: one CUDA device per rank, cuBLAS/kernels/NCCL; built only when nvcc
// and NCCL are found).
//
// A backend runs a TaskGraph for real and returns an ExecutionTrace in the simulator's format
// (core/trace.h), so the two traces compare task by task. It never knows which strategy made
// the graph, and it never simulates: every figure it returns was measured.
//
// Contract of Run(), for both backends:
//   - ranks: task.rank r runs on the backend's rank r (a thread, a device). A graph needing more
//     ranks than NumRanks() fails before anything runs (BackendError, kTooFewRanks).
//   - order: tasks of one (rank, stream) run in graph order; a task starts only after its deps
//     finished; collectives and send/recv pair across ranks as the graph says (Collective::ranks,
//     Task::peer/tag). Real buffers of the task's bytes/shape/dtype are allocated, moved and
//     reduced: nothing is slept or skipped.
//   - timing: TraceRecord start_s/end_s are seconds since the run's common time origin (taken
//     once for all ranks, before the first task), measured around the real work (steady_clock
//     on the host, CUDA events on a device). For collectives and transfers, peers_joined_s is
//     when the last member joined, as in the simulator. kMemory tasks take no time
//     (start_s == end_s at the moment they were reached) but do allocate/free the bytes, so that
//     an out-of-memory plan fails like it would in training.
//   - trace: executor = Name(), num_ranks = g.num_ranks(), streams = g.streams(), one record per
//     task with records[i].task == i, makespan_s = the latest end_s.
//   - iterations: the graph already holds warm-up + measured iterations (Task::iteration; the
//     command plans it with RunOptions' counts in TrainingSpec). Every iteration is run and
//     traced; metrics skip the warm-up ones.
//   - failures the real world throws (no device, out of memory, a failed collective, too few
//     ranks) raise BackendError, whose partial() trace keeps every task measured before the
//     failure (records of tasks that did not finish have start_s = end_s = -1).
#ifndef STRATASIM_VALIDATE_BACKEND_H_
#define STRATASIM_VALIDATE_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/error.h"
#include "core/task_graph.h"
#include "core/trace.h"
#include "validate/process_group.h"

namespace stratasim::validate {

struct RunOptions {
  // Iterations of the graph [0, warmup_iterations) are warm-up (caches, allocator, cuBLAS
  // heuristics), [warmup, warmup + measured) are compared. Must match the graph's iterations;
  // backends use it only to know when the warm-up ends.
  int warmup_iterations = 1;
  int measured_iterations = 2;
  // Seeds the values the buffers are filled with. Values do not change timings of dense
  // kernels, but a fixed seed makes a run reproducible bit for bit in what it computes.
  std::uint64_t seed = 0;
  // Largest total of kMemory allocations per rank before the run fails with kOutOfMemory; 0 =
  // the backend's own limit (host: the memory_bytes its Describe() reports per rank; cuda: what
  // cudaMalloc allows).
  double memory_limit_bytes_per_rank = 0;
  // A multi-process run (validate/process_group.h): when set, this process runs only the
  // plan's rank processes->rank() (all its streams), talks to the other ranks through it, and
  // returns a trace whose records of other ranks are unmeasured (start_s = end_s = -1). The
  // trace's times are seconds since a start instant common to all processes (the processes'
  // clocks are aligned first, validate/clock_sync.h), so that rank 0 can merge the traces.
  // peers_joined_s is this process's own join time; the merge sets the members' latest.
  // nullptr: one process runs every rank.
  ProcessGroup* processes = nullptr;
};

// Repetition policy of one micro-benchmark: `warmup` untimed runs, then `repetitions` timed
// runs (at least), continuing until `min_total_s` of timed work has accumulated so that short
// ops are not measured below the clock's resolution.
struct BenchOptions {
  int warmup = 2;
  int repetitions = 5;
  double min_total_s = 0.01;
};

// The timed runs of one micro-benchmark, in seconds per op.
struct BenchResult {
  double median_s = 0;
  double min_s = 0;
  int samples = 0;
};

class BackendError : public Error {
 public:
  enum class Kind {
    kUnavailable,    // no device, no driver, backend not built
    kTooFewRanks,    // the plan needs more ranks than the hardware has
    kOutOfMemory,    // an allocation failed or exceeded the limit
    kCommunication,  // a collective or transfer failed (NCCL error, peer gone)
    kExecution,      // a kernel or other task failed
  };
  BackendError(Kind kind, const std::string& message, ExecutionTrace partial = {})
      : Error(message), kind_(kind), partial_(std::move(partial)) {}

  Kind kind() const { return kind_; }
  // What was measured before the failure (may be empty when nothing ran).
  const ExecutionTrace& partial() const { return partial_; }

 private:
  Kind kind_;
  ExecutionTrace partial_;
};

std::string_view ToString(BackendError::Kind k);

class Backend {
 public:
  virtual ~Backend() = default;

  // "host" or "cuda": ExecutionTrace::executor of its traces.
  virtual std::string Name() const = 0;
  // How many ranks (threads, devices) this backend can run at once.
  virtual int NumRanks() const = 0;
  // The hardware it runs on as a cluster the simulator can build: one server group of
  // NumRanks() "GPUs" whose kind (in gpu_kinds) carries measured or documented peaks. The
  // simulation the run is compared with uses this cluster, not the scenario's.
  virtual ClusterSpec Describe() const = 0;

  // Runs `g` for real (contract above). Throws BackendError.
  virtual ExecutionTrace Run(const TaskGraph& g, const RunOptions& options) = 0;

  // Micro-benchmarks for `calibrate`, each run on rank 0 (or ranks [0, group_size)); a backend
  // whose ranks share hardware may run compute benchmarks on all ranks at once and report the
  // mean, as the host does (its threads share caches and the memory bus):
  // A kCompute task (op, dtype, gemm shape, flops, bytes) executed as Run() would execute it;
  // build one with GemmTask/ElementwiseTask below.
  virtual BenchResult TimeCompute(const Task& task, const BenchOptions& options) = 0;
  // The fixed cost of one compute task: an empty kernel (cuda) or an empty task (host).
  virtual BenchResult TimeLaunch(const BenchOptions& options) = 0;
  // A host<->device copy of `bytes` (host: a memcpy between two buffers).
  virtual BenchResult TimeCopy(double bytes, CopyDirection direction,
                               const BenchOptions& options) = 0;
  // One collective over ranks [0, group_size) of `bytes` as Collective::bytes counts them
  // (nccl-tests' size); the time is the slowest member's, from a common start.
  virtual BenchResult TimeCollective(CollectiveKind kind, int group_size, double bytes, DType dtype,
                                     const BenchOptions& options) = 0;
};

// A compute task of a GEMM of `shape` in `dtype` (flops = 2mnk·batch, bytes = A + B + C).
Task GemmTask(const GemmShape& shape, DType dtype);
// A memory-bound elementwise task reading and writing `bytes` in total.
Task ElementwiseTask(double bytes, DType dtype);

// Backends by name: "host" always; "cuda" when built with CUDA (else BackendError
// kUnavailable naming why). `ranks` = 0 takes all the hardware offers (host: hardware
// threads; cuda: visible devices). Defined in stratasim_validate (backend_factory.cpp).
std::unique_ptr<Backend> MakeBackend(const std::string& name, int ranks);
// The names MakeBackend accepts in this build ("host", and "cuda" when built with it).
std::vector<std::string> BackendNames();

// The cuda backend on `ranks` devices (0 = all visible). Defined in validate/cuda/, which is
// compiled only with CUDA; MakeBackend calls it when STRATASIM_HAVE_CUDA_BACKEND is defined.
std::unique_ptr<Backend> MakeCudaBackend(int ranks);

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_BACKEND_H_
