// NCCL communicators of a multi-process cuda run (`mpirun -np N stratasim validate ...
// --backend cuda`, one process per GPU), set up over the run's ProcessGroup
// (validate/process_group.h):
//
//   1. every process learns the hosts of all (AllGather) and takes the device of its local
//      rank on its host, modulo the devices it sees;
//   2. rank 0 creates the NCCL unique id (ncclGetUniqueId) and broadcasts it (hex text);
//   3. every process joins the world communicator (ncclCommInitRank(size, its rank));
//   4. the plan's communicators (PlanCommunicators) are split off the world one after the
//      other in the plan's order, every process calling ncclCommSplit for each (non-members
//      with NCCL_SPLIT_NOCOLOR, as NCCL requires of every rank of the parent), so that all
//      processes create the same communicators in the same order.
//
// After each step the processes exchange their outcome (AllGather), so that one rank's
// failure (no device, an NCCL error) ends every process with the same BackendError naming that
// rank, rather than leaving the others waiting inside NCCL for it.
//
// The NCCL and CUDA calls are injected (NcclCalls): RealNcclCalls() (nccl_ops.h) in the
// backend, a stub in the unit test, which thus runs without a GPU. Nothing here includes
// CUDA's or NCCL's headers: a communicator is an opaque pointer (an ncclComm_t).
#ifndef STRATASIM_VALIDATE_CUDA_NCCL_BOOTSTRAP_H_
#define STRATASIM_VALIDATE_CUDA_NCCL_BOOTSTRAP_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/task_graph.h"
#include "validate/backend.h"
#include "validate/process_group.h"

namespace stratasim::validate::cuda {

// An ncclComm_t.
using NcclComm = void*;

// NCCL_UNIQUE_ID_BYTES of nccl.h: the size of an ncclUniqueId.
inline constexpr std::size_t kNcclUniqueIdBytes = 128;
// NCCL_SPLIT_NOCOLOR of nccl.h: the color of a rank that joins no part of a split.
inline constexpr int kNcclNoColor = -1;

// The calls the bootstrap makes. Those returning a string return "" on success, else the
// reason (NCCL's or CUDA's error text).
struct NcclCalls {
  std::function<std::string(int* count)> device_count;  // cudaGetDeviceCount
  std::function<std::string(int device)> set_device;    // cudaSetDevice
  // ncclGetUniqueId; `id` receives kNcclUniqueIdBytes bytes.
  std::function<std::string(std::string* id)> get_unique_id;
  std::function<std::string(NcclComm* comm, int nranks, const std::string& id, int rank)>
      comm_init_rank;
  // ncclCommSplit; a color of kNcclNoColor leaves *comm null.
  std::function<std::string(NcclComm parent, int color, int key, NcclComm* comm)> comm_split;
  std::function<void(NcclComm comm)> comm_destroy;
  std::function<void(NcclComm comm)> comm_abort;
};

// One communicator a plan needs besides the world's.
struct CommGroup {
  // What the executor keys it by: a collective's ranks, -1, its members' streams; or -2, a
  // send's stream, its receive's stream (one all-ranks communicator per stream pair, so that
  // a communicator is never used from two streams at once, which NCCL forbids).
  std::vector<int> key;
  std::vector<int> ranks;  // the members; NCCL rank i is ranks[i]
};

// The communicators of `g`'s collectives and transfers, and which each task uses.
struct CommPlan {
  // In a deterministic order: the collectives' in collective order, then the transfers' in
  // task order, each key once.
  std::vector<CommGroup> groups;
  std::vector<int> group_of_task;   // per task: index in groups, or -1 (no communication)
  std::vector<int> member_of_task;  // per task: its NCCL rank in that group, or -1
};
CommPlan PlanCommunicators(const TaskGraph& g);

class NcclBootstrap {
 public:
  // Collective: every process of `processes` calls it with the same `groups`. Throws
  // BackendError (kUnavailable: no device; kCommunication: an NCCL call failed or a process
  // did not answer) naming the first failing rank, on every process.
  NcclBootstrap(ProcessGroup& processes, NcclCalls calls, const std::vector<CommGroup>& groups);
  // Destroys the communicators (unless aborted).
  ~NcclBootstrap();
  NcclBootstrap(const NcclBootstrap&) = delete;
  NcclBootstrap& operator=(const NcclBootstrap&) = delete;

  // This process's rank among the processes of its host, and the device it runs on.
  int local_rank() const { return local_rank_; }
  int device() const { return device_; }
  NcclComm world() const { return world_; }
  // The communicator of groups[i], or nullptr where this process is not a member.
  NcclComm group(std::size_t i) const { return groups_.at(i); }
  // Every communicator this process holds (the world's first), for polling their errors.
  std::vector<NcclComm> all() const;
  // Aborts every communicator (unblocking NCCL kernels that wait for peers that stopped);
  // the destructor then leaves them alone. Safe to call more than once.
  void AbortAll();

 private:
  // Exchanges this process's outcome of `step` ("" = fine) and throws, on every process, the
  // first failing rank's as BackendError of `kind`.
  void Agree(const std::string& step, const std::string& error, BackendError::Kind kind);
  void DestroyAll();

  ProcessGroup& processes_;
  NcclCalls calls_;
  int local_rank_ = 0;
  int device_ = -1;
  NcclComm world_ = nullptr;
  std::vector<NcclComm> groups_;
  bool aborted_ = false;
};

// The unique id as text for ProcessGroup::Broadcast (hex: no NUL bytes in transit), and back.
std::string HexEncode(const std::string& bytes);
// Throws stratasim::Error on text that is not 2n hex digits.
std::string HexDecode(const std::string& hex);

}  // namespace stratasim::validate::cuda

#endif  // STRATASIM_VALIDATE_CUDA_NCCL_BOOTSTRAP_H_
