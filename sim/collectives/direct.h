// Direct (one-shot) algorithms: every transfer at once, no forwarding. Lowest latency (one
// step), most bytes per link for all-reduce: the choice for small messages (NCCL's
// one-shot all-reduce in its NVLS/"allreduce one-shot" kernels; MPICH's direct all-to-all).
//   all_reduce      every member sends its whole buffer to every other; each reduces locally
//   reduce_scatter  member i sends block j (bytes/N) to member j
//   all_gather      member i sends its block (bytes/N) to every other member
//   gather/scatter  the root receives/sends one block (bytes/N) from/to every other member
//   all_to_all      member i sends block j (bytes/N) to member j
//   all_to_all_v    member i sends matrix[i*N+j] bytes to j; zero entries are skipped
// Nothing is pipelined: `stream` fidelity lowers exactly as `step`.
#ifndef STRATASIM_SIM_COLLECTIVES_DIRECT_H_
#define STRATASIM_SIM_COLLECTIVES_DIRECT_H_

#include "sim/collectives/flow_builder.h"
#include "sim/collectives/lower_args.h"

namespace stratasim::sim {

// Bytes member i sends member j in an all-to-all(-v): the matrix entry, or bytes/N. Throws
// stratasim::Error if an all_to_all_v matrix is not N x N.
double AllToAllBytes(const Collective& c, int i, int j);
void CheckAllToAllMatrix(const Collective& c);

void LowerDirect(const LowerArgs& a, FlowBuilder* b);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_DIRECT_H_
