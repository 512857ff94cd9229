// Pairwise-exchange all-to-all (Thakur, Rabenseifner & Gropp, IJHPCA 2005, section 4.5; the
// algorithm of MPICH and of NCCL-based all-to-all loops): N-1 rounds; in round k member i sends
// its block for member (i+k) mod N. A member starts round k once its round k-1 send and
// receive are done, so each link carries one block at a time: fewer concurrent flows than
// direct, at N-1 step latencies. Nothing is pipelined: `stream` lowers exactly as `step`.
#ifndef STRATASIM_SIM_COLLECTIVES_PAIRWISE_H_
#define STRATASIM_SIM_COLLECTIVES_PAIRWISE_H_

#include "sim/collectives/flow_builder.h"
#include "sim/collectives/lower_args.h"

namespace stratasim::sim {

// all_to_all and all_to_all_v (zero entries skipped: the member's previous flows carry over
// as its dependencies); throws stratasim::Error otherwise.
void LowerPairwise(const LowerArgs& a, FlowBuilder* b);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_PAIRWISE_H_
