// NCCL for the cuda backend: error checking, communicators built per group, and one TaskGraph
// collective or transfer as NCCL calls.
//
// Communicators: one clique per (group of ranks in ring order, streams its members run on),
// created with ncclCommInitAll over the members' devices (one process, one thread creating
// them; NCCL rank i = Collective::ranks[i]). Keying on the streams too means one communicator
// is never used from two streams at once, which NCCL forbids (concurrent operations on one
// communicator may deadlock). A one-member group gives a valid single-rank communicator: the
// calls run (a local copy) and are timed, which is what a one-GPU machine can check.
// A multi-process run (one process per GPU, over MPI) creates the same communicators with
// ncclCommInitRank and ncclCommSplit instead (nccl_bootstrap.h, with RealNcclCalls below).
#ifndef STRATASIM_VALIDATE_CUDA_NCCL_OPS_H_
#define STRATASIM_VALIDATE_CUDA_NCCL_OPS_H_

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/task_graph.h"
#include "validate/cuda/nccl_bootstrap.h"

namespace stratasim::validate::cuda {

// Throws BackendError(kCommunication) "FILE:LINE: CALL: NCCL's reason (last error text)".
void CheckNccl(ncclResult_t result, const char* call, const char* file, int line);
#define STRATASIM_NCCL_CHECK(call) \
  ::stratasim::validate::cuda::CheckNccl((call), #call, __FILE__, __LINE__)

// The NCCL type reductions of `d` run in, and its size. FP8 is E4M3; INT4 travels as bytes.
std::pair<ncclDataType_t, double> NcclType(DType d);

// Bytes one member's send and receive buffers need for collective `c` (the largest member).
std::pair<double, double> CollectiveBufferBytes(const Collective& c);

// Enqueues member `member`'s part of `c` on `stream` with the clique's communicator.
void EnqueueCollective(const Collective& c, int member, ncclComm_t comm, void* send, void* recv,
                       cudaStream_t stream);

// NCCL's and CUDA's own calls for NcclBootstrap.
NcclCalls RealNcclCalls();

// "NCCL's reason (last error text)" of a failed call.
std::string NcclErrorText(ncclResult_t result);

// Communicator cliques, created on the calling thread, destroyed (or aborted) at the end.
class Communicators {
 public:
  Communicators() = default;
  ~Communicators();
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;

  // The clique over `devices` (member i on devices[i]) for `key`, created on first use.
  const std::vector<ncclComm_t>& Clique(const std::vector<int>& key,
                                        const std::vector<int>& devices);
  // Unblocks every pending NCCL kernel (a failed run) and frees the communicators.
  void AbortAll();

 private:
  std::map<std::vector<int>, std::vector<ncclComm_t>> cliques_;
  bool aborted_ = false;
};

}  // namespace stratasim::validate::cuda

#endif  // STRATASIM_VALIDATE_CUDA_NCCL_OPS_H_
