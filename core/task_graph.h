// The plan IR: a task graph that strategies produce and executors (SimGrid, real GPUs) consume.
//
// Every task belongs to one rank (GPU) and one stream. Tasks on the same (rank, stream) run in
// the order they were added, like kernels on a CUDA stream; `deps` adds edges across streams
// and ranks. A collective is one task per member rank (as each rank launches its own NCCL
// call) sharing a Collective record; a point-to-point transfer is a Send task on the source and
// a Recv task on the destination paired by tag. Dependencies must point to tasks added earlier,
// so a graph is acyclic by construction.
#ifndef STRATASIM_CORE_TASK_GRAPH_H_
#define STRATASIM_CORE_TASK_GRAPH_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/name.h"

namespace stratasim {

using TaskId = std::int32_t;

enum class TaskKind : std::uint8_t { kCompute, kCollective, kSend, kRecv, kCopy, kMemory };
// What a task is for; metrics count model FLOPs from kForward and kBackward only (MFU).
enum class Phase : std::uint8_t {
  kForward,
  kBackward,
  kRecompute,
  kOptimizer,
  kCommunication,
  kOther
};
// kAttention: a product of two activations of unfused attention (Q K^T, P V); kFusedAttention:
// the whole attention core as one kernel (FlashAttention; Dao et al. 2022), whose `gemm` gives
// batch = sequences x heads, m = query rows, n = key columns, k = head dimension.
enum class OpKind : std::uint8_t {
  kGemm,
  kAttention,
  kFusedAttention,
  kElementwise,
  kOptimizer,
  kOther
};
inline constexpr OpKind kAllOpKinds[] = {OpKind::kGemm,           OpKind::kAttention,
                                         OpKind::kFusedAttention, OpKind::kElementwise,
                                         OpKind::kOptimizer,      OpKind::kOther};
enum class CollectiveKind {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kReduce,
  kAllToAll,
  kAllToAllV,
  kGather,
  kScatter,
};
inline constexpr CollectiveKind kAllCollectiveKinds[] = {
    CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
    CollectiveKind::kBroadcast, CollectiveKind::kReduce,        CollectiveKind::kAllToAll,
    CollectiveKind::kAllToAllV, CollectiveKind::kGather,        CollectiveKind::kScatter};
enum class CopyDirection : std::uint8_t { kHostToDevice, kDeviceToHost };

// The shape of a matrix product C[m, n] = A[m, k] · B[k, n], repeated `batch` times (attention
// runs one product per sequence and head). Cost models use it for tile and wave quantisation;
// m == 0 means "no shape known" (the task is costed by its FLOPs and bytes alone).
struct GemmShape {
  double m = 0;
  double n = 0;
  double k = 0;
  double batch = 1;

  bool known() const { return m > 0 && n > 0 && k > 0; }
};

// Plain data of tens of bytes (144 with its fields ordered for packing; names interned,
// core/name.h): plans of millions of tasks must fit in memory (docs/scale.md).
struct Task {
  TaskId id = -1;
  int rank = 0;
  int stream = 0;  // index into TaskGraph::streams()
  int iteration = 0;
  // A folded replica's stand-in (docs/scale.md): a collective member or transfer end on a rank
  // whose replica is not simulated, started when the earlier task `mirror` (its counterpart in
  // the representative replica) starts, besides its deps and stream order. -1: none.
  TaskId mirror = -1;
  // kCollective: index into TaskGraph::collectives().
  int collective = -1;
  // kSend/kRecv: the other end, and the tag pairing the two tasks.
  int peer = -1;
  int tag = -1;
  TaskKind kind = TaskKind::kCompute;
  Phase phase = Phase::kOther;
  // kCompute: the work of one kernel (or a fused group) on this rank.
  OpKind op = OpKind::kOther;
  // kCopy.
  CopyDirection copy = CopyDirection::kHostToDevice;
  // kFusedAttention: query i attends to keys 0..i only (a decoder's causal mask), which a fused
  // kernel exploits by skipping the masked half of the score tiles.
  bool causal = false;
  // kCompute, kSend, kRecv: the task runs on its rank's host CPU socket (the socket owning the
  // rank's GPU), not on the GPU: a parameter-server shard on a CPU node (strategies/async/).
  // A Send's flag places the source end, a Recv's the destination end. In the padding after
  // the one-byte fields, so Task keeps its size.
  bool on_host = false;
  DType dtype = DType::kFP32;
  Name name;
  Name category;  // free label for reports: "dp", "activations", "weights", ...
  std::vector<TaskId> deps;

  double flops = 0;
  // kCompute: bytes read and written in device memory. kSend/kRecv/kCopy: bytes transferred.
  double bytes = 0;
  // kMemory: change of the rank's allocated device memory (positive: alloc, negative: free).
  double memory_delta_bytes = 0;
  // kCompute, optional: the matrix product the kernel runs (GEMM and attention kernels).
  GemmShape gemm;
};

struct Collective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::vector<int> ranks;  // members in ring order
  // The buffer size of the collective as nccl-tests' "size" counts it: the all-reduce buffer,
  // the reduce-scatter input, the all-gather output, the broadcast/reduce buffer, the
  // all-to-all send buffer of one rank (N equal blocks), the gather output / scatter input.
  // All-to-all-v: the largest send buffer (the matrix says what moves).
  double bytes = 0;
  // kAllToAllV only: bytes sent from member i to member j at [i * N + j] (row-major, N members).
  std::vector<double> matrix;
  DType dtype = DType::kFP32;
  int root = 0;                    // broadcast, reduce, gather, scatter: a member rank
  std::string algorithm = "auto";  // "auto" lets the executor choose
  std::vector<TaskId> members;     // the member task of ranks[i] is members[i]
};

// Ends the message of every error that says a plan cannot be simulated while it is planned
// (docs/scale.md, "Iterations"); `stratasim run` then simulates that plan whole.
inline constexpr char kSimulateWhole[] = "simulate this plan whole (--write-graphs, docs/scale.md)";

// Stream priorities (TaskGraph::SetStreamPriority) lie in this range: wide enough for any
// number of traffic classes, narrow enough that no arithmetic on them overflows.
inline constexpr int kMinStreamPriority = -1000;
inline constexpr int kMaxStreamPriority = 1000;

// The most tasks a graph has over its life, retired ones included: TaskIds are 32-bit.
inline constexpr long long kMaxTasksPerRun = 0x7fffffff;

// Adding a task past TaskGraph::SetTaskLimit. Callers that know what the plan was for turn it
// into advice (cli/run_scenario.cpp).
class TaskLimitError : public Error {
 public:
  TaskLimitError(long long limit)
      : Error("the plan passed the limit of " + std::to_string(limit) + " tasks"), limit_(limit) {}
  long long limit() const { return limit_; }

 private:
  long long limit_;
};

class TaskGraph {
 public:
  explicit TaskGraph(int num_ranks = 0);

  int num_ranks() const { return num_ranks_; }
  // A deque, not a vector: a graph of millions of tasks grows in blocks, without the copy into
  // a doubled buffer that made a vector's peak three times its size (docs/scale.md).
  // The tasks not retired (Retire): every task of a graph that never retires, whose ids are
  // then the indices.
  const std::deque<Task>& tasks() const { return tasks_; }
  const Task& task(TaskId id) const;
  const std::vector<std::string>& streams() const { return streams_; }
  // The collectives not retired; collective(i) looks one up by its index.
  const std::deque<Collective>& collectives() const { return collectives_; }
  const Collective& collective(int index) const;

  // Every task and collective ever added: the id and index the next ones get.
  TaskId next_id() const { return base_ + static_cast<TaskId>(tasks_.size()); }
  int next_collective() const { return collective_base_ + static_cast<int>(collectives_.size()); }
  TaskId first_live() const { return base_; }

  // A graph simulated while its planner is still adding iterations (docs/scale.md,
  // "Iterations") keeps only what the simulation has not finished with: Retire drops the tasks
  // with ids below `below`, and the collectives all of whose members are among them. A later
  // task may still depend on a retired one (it finished). Reading a retired task throws.
  void Retire(TaskId below);
  // Whether every task was added with an iteration no lower than the one before it, as a
  // graph simulated while it is planned must be.
  bool iteration_ordered() const { return iteration_ordered_; }

  // The iteration feed (strategies/iteration_feed.h) runs a planner on its own thread and
  // pauses it before the first task of each new iteration: a hook set for the calling thread
  // that Add calls with the graph and the task's iteration before adding it.
  using AddHook = std::function<void(TaskGraph* graph, int iteration)>;
  static void SetThreadAddHook(AddHook hook);

  // Returns the id of a stream name, adding it on first use.
  int Stream(const std::string& name);

  // The priority of a stream, on every rank: higher is more urgent, 0 unless set, within
  // [kMinStreamPriority, kMaxStreamPriority]. The simulator holds a communication task while one
  // of a higher-priority stream is in flight on its rank (docs/architecture.md, "Stream
  // priorities"); the CUDA backend creates the stream with a matching CUDA priority. Throws
  // stratasim::Error for an undeclared stream or a priority out of range.
  void SetStreamPriority(int stream, int priority);
  int stream_priority(int stream) const;
  // One per stream, in stream order.
  const std::vector<int>& stream_priorities() const { return stream_priorities_; }
  // Whether some stream's priority is not 0 (else priorities change nothing).
  bool has_stream_priorities() const;

  // Adds a task (its id is assigned); checks rank, stream and deps. Throws stratasim::Error.
  TaskId Add(Task task);
  void AddDep(TaskId task, TaskId dep);

  // Adds one member task per rank of `c`, each a copy of `member` with kind kCollective and
  // that rank. Returns the member ids in the order of c.ranks.
  std::vector<TaskId> AddCollective(Collective c, const Task& member);
  // Lower level, for readers that restore per-member fields: declares `c` (its members are
  // cleared) and returns its index; member tasks are then Add()ed in the order of c.ranks.
  int DeclareCollective(Collective c);

  // Adds a Send on `src` and a Recv on `dst` of `bytes`; `send`/`recv` give name, stream,
  // phase... Returns {send id, recv id}.
  std::pair<TaskId, TaskId> AddTransfer(int src, int dst, double bytes, Task send, Task recv);

  // At most `limit` tasks (>= 1; TaskIds are 32-bit, so never more than INT32_MAX): Add throws
  // TaskLimitError beyond it, so that a plan too large for the machine stops growing before
  // memory runs out.
  void SetTaskLimit(long long limit);

  // Replaces collective `index`'s algorithm hint (Collective::algorithm): validate simulates
  // what its backend ran, not what the plan asked for.
  void SetAlgorithm(int index, std::string algorithm);

  // Makes `task` a mirror of the earlier task `of` (Task::mirror).
  void SetMirror(TaskId task, TaskId of);

  // Folding (docs/scale.md): the representative rank of each rank, whose figures stand for it,
  // or empty when every rank is simulated in full. A folded rank holds only mirror tasks.
  void SetFold(std::vector<int> representative);
  const std::vector<int>& fold() const { return fold_; }
  // The rank whose work stands for `rank`'s: itself unless folded.
  int Representative(int rank) const { return fold_.empty() ? rank : fold_[rank]; }

  // When rank `rank` starts (a job's arrival on a shared cluster, docs/multi-job.md): none of
  // its tasks starts before `start_s` seconds of simulated time. 0 unless set; finite, >= 0.
  // Throws stratasim::Error for a rank outside the graph or a bad time.
  void SetRankStart(int rank, double start_s);
  double rank_start_s(int rank) const;
  // One per rank, or empty when no rank has a start time.
  const std::vector<double>& rank_starts() const { return rank_start_s_; }

  // Checks the invariants that Add enforces plus pairing of sends and receives; throws
  // stratasim::Error naming the task. Graphs read from files are checked with it.
  void Validate() const;

 private:
  void CheckTask(const Task& t) const;

  Task& Mutable(TaskId id, const char* what);

  int num_ranks_;
  int next_tag_ = 0;
  TaskId base_ = 0;          // the id of tasks_.front()
  int collective_base_ = 0;  // the index of collectives_.front()
  int last_iteration_ = 0;
  bool iteration_ordered_ = true;
  std::deque<Task> tasks_;
  std::vector<std::string> streams_;
  std::vector<int> stream_priorities_;  // parallel to streams_
  std::deque<Collective> collectives_;
  std::vector<int> fold_;
  std::vector<double> rank_start_s_;  // empty: every rank starts at 0
  long long task_limit_ = kMaxTasksPerRun;
};

std::string_view ToString(TaskKind k);
std::string_view ToString(Phase p);
std::string_view ToString(OpKind k);
std::string_view ToString(CollectiveKind k);
std::string_view ToString(CopyDirection d);

// JSON form ("format": "stratasim-taskgraph", "version": 1; "stream_priorities" only when some
// priority is not 0, and 0 for every stream when absent; "rank_start_s" only when some rank has
// a start time, one per rank). Reading validates the graph and
// throws stratasim::Error with the JSON path of a bad field.
std::string TaskGraphToJson(const TaskGraph& g);
TaskGraph TaskGraphFromJson(const std::string& text);

}  // namespace stratasim

#endif  // STRATASIM_CORE_TASK_GRAPH_H_
