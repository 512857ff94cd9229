// Collectives whose members are in different processes (a multi-process run, RunOptions::
// processes): the same algorithms as host_collectives.h, step for step, with the bytes moved
// by the ProcessGroup's point-to-point calls instead of read from a neighbour's buffer, so that
// HostCollectiveAlgorithm() and the "ring/simple/1ch" label stay true.
//
//   all_reduce, reduce_scatter, all_gather  ring: in step s member i sends chunk (i - s) and
//                   receives chunk (i - 1 - s) from its left neighbour (reduce-scatter: into a
//                   scratch chunk, then added into its own; all-gather: straight into place).
//   broadcast, reduce  the chain from (to) the root, the buffer in N slices: in step s the
//                   member at position p receives slice s - p + 1 from its predecessor and
//                   sends slice s - p, which it completed in step s - 1, to its successor.
//   all_to_all(_v)  pairwise: in step s member i sends its block for member (i + s) and
//                   receives member (i - s)'s block for it.
//   gather, scatter direct: each member's block moves between it and the root.
//
// Process p runs the plan's rank p, so member m's peer is process c.ranks[m]. Messages of one
// collective travel on one channel; (sender, receiver, channel) FIFO order keeps the steps
// apart.
#ifndef STRATASIM_VALIDATE_HOST_HOST_PROCESS_COLLECTIVES_H_
#define STRATASIM_VALIDATE_HOST_HOST_PROCESS_COLLECTIVES_H_

#include "core/task_graph.h"
#include "validate/process_group.h"

namespace stratasim::validate::host {

// Bytes of scratch after CollectiveWorkspaceBytes(c, member) that a member needs here: one
// received chunk (slice) to add into its own for the reducing collectives, else 0.
double ProcessCollectiveScratchBytes(const Collective& c, int member);

// Member `member` (index into c.ranks; this process is rank c.ranks[member]) runs its part.
// `workspace` holds CollectiveWorkspaceBytes + ProcessCollectiveScratchBytes, laid out as
// host_collectives.h's (send buffer, receive buffer) then the scratch. Throws what the
// ProcessGroup throws (ProcessGroupError, Cancelled).
void RunCollectiveOverProcesses(const Collective& c, int member, unsigned char* workspace,
                                ProcessGroup& pg, int channel, const Wait& wait);

}  // namespace stratasim::validate::host

#endif  // STRATASIM_VALIDATE_HOST_HOST_PROCESS_COLLECTIVES_H_
