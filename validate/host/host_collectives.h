// Collectives among the host backend's rank threads, through shared memory: real buffers,
// real copies and real reductions, each member waiting for the others step by step.
//
// Every member thread calls Run() with its own buffers; buffers stay valid until Run() returns
// on every member (a final barrier). Between algorithm steps the members meet at a barrier, as
// the ring's send/receive pairs would synchronise them. Algorithms (names as
// core/collective_names.h spells them, so that the simulation can be told to run the same):
//
//   all_reduce      ring: N-1 reduce-scatter steps, then N-1 all-gather steps; in step s
//                   member i reads chunk (i-1-s) mod N from its left neighbour and adds it into
//                   its own (then copies it): 2(N-1)/N of the buffer crosses between threads
//                   per member, as in NCCL's ring (Patarasuk & Yuan 2009).
//   reduce_scatter  ring: the first half of the above; each member keeps its reduced chunk.
//   all_gather      ring: the second half; each member starts with its chunk in place.
//   broadcast       ring: the buffer in N slices, pipelined down the chain from the root.
//   reduce          ring: the buffer in N slices, pipelined up the chain towards the root,
//                   each member adding its predecessor's partial sum.
//   all_to_all(_v)  pairwise: in step s member i copies its block from member (i - s) mod N.
//   gather, scatter direct: each member's block moves between it and the root.
//
// Reductions add floats (the bytes are treated as FP32 whatever the dtype: the work per byte
// is what matters for timing, and CPUs reduce FP16/BF16 by converting to FP32 anyway).
#ifndef STRATASIM_VALIDATE_HOST_HOST_COLLECTIVES_H_
#define STRATASIM_VALIDATE_HOST_HOST_COLLECTIVES_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/task_graph.h"
#include "validate/host/sync.h"

namespace stratasim::validate::host {

// The algorithm the host runs for `kind` (a name from core/collective_names.h).
std::string HostCollectiveAlgorithm(CollectiveKind kind);

// Bytes of workspace a member of `c` needs (send and receive buffers).
double CollectiveWorkspaceBytes(const Collective& c, int member);

// The layout of that workspace, as floats: the send buffer (in place for the ring
// collectives), then the receive buffer.
std::size_t CollectiveSendFloats(const Collective& c, int member);
std::size_t CollectiveRecvFloats(const Collective& c, int member);
// The first element of chunk `j` of `total` elements cut into `parts` (the ring's chunks and
// the pipelines' slices).
std::size_t CollectiveChunkBegin(std::size_t total, int parts, int j);
// The member index of c.root (rooted collectives).
int CollectiveRootMember(const Collective& c);

// One execution of one collective by its members.
class GroupRun {
 public:
  GroupRun(const Collective& c, AbortFlag* abort);

  // Member `member` (index into c.ranks) runs its part with `workspace` (at least
  // CollectiveWorkspaceBytes). Returns when the member's part is done; sets `joined_s` to the
  // time the last member joined. Throws Aborted when the run aborts.
  void Run(int member, unsigned char* workspace, const Clock& clock, double* joined_s);

 private:
  float* Send(int member) const;
  float* Recv(int member) const;
  void ReduceScatter(int i, const Clock& clock);
  void AllGather(int i, const Clock& clock);
  void Broadcast(int i, const Clock& clock);
  void Reduce(int i, const Clock& clock);
  void AllToAll(int i, const Clock& clock);
  void Gather(int i, const Clock& clock);
  void Scatter(int i, const Clock& clock);

  const Collective& c_;
  const int n_;
  Barrier barrier_;
  std::vector<unsigned char*> workspace_;  // per member, set when it joins
};

}  // namespace stratasim::validate::host

#endif  // STRATASIM_VALIDATE_HOST_HOST_COLLECTIVES_H_
