// Lowers a collective into point-to-point flows between its members, with the dependencies
// its algorithm imposes. Pure data: the executor turns each flow into a SimGrid Comm along the
// platform's route, so collectives share links with everything else that runs.
#ifndef STRATASIM_SIM_COLLECTIVE_LOWERING_H_
#define STRATASIM_SIM_COLLECTIVE_LOWERING_H_

#include <vector>

#include "core/task_graph.h"

namespace stratasim::sim {

struct Flow {
  int src = 0;  // member indices (positions in Collective::ranks), not ranks
  int dst = 0;
  double bytes = 0;
  std::vector<int> deps;  // flows that must complete before this one starts
};

// A flow also waits until both its members have joined the collective (their member task
// became ready), as an NCCL kernel moves data only once both ends are running.
struct FlowProgram {
  std::vector<Flow> flows;
};

// Broadcast pipelines the message along the chain in chunks of this size: NCCL's default
// buffer (NCCL_BUFFSIZE, 4 MiB) divided into its NCCL_STEPS (8) slots.
inline constexpr double kBroadcastChunkBytes = 512.0 * 1024;
// Upper bound on broadcast chunks, to bound the events of very large broadcasts.
inline constexpr int kMaxBroadcastChunks = 64;

// Algorithms: all-reduce, reduce-scatter and all-gather "ring" (the default for "auto");
// broadcast "chain" (pipelined along the ring from the root; the default for "auto").
// Throws stratasim::Error for an algorithm the collective does not have.
FlowProgram LowerCollective(const Collective& c);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVE_LOWERING_H_
