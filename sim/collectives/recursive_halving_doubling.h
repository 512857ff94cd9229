// Rabenseifner's all-reduce (Thakur, Rabenseifner & Gropp, "Optimization of collective
// communication operations in MPICH", IJHPCA 2005, section 4.4): reduce-scatter by recursive
// halving, then all-gather by recursive doubling. For N not a power of two, with p the largest
// power of two below N and r = N - p, the first 2r members fold pairwise first (member 2i sends
// its whole buffer to 2i+1, which reduces), the p remaining members run the algorithm, and the
// folded members get the result back at the end.
#ifndef STRATASIM_SIM_COLLECTIVES_RECURSIVE_HALVING_DOUBLING_H_
#define STRATASIM_SIM_COLLECTIVES_RECURSIVE_HALVING_DOUBLING_H_

#include "sim/collectives/flow_builder.h"
#include "sim/collectives/lower_args.h"

namespace stratasim::sim {

// all_reduce only (throws stratasim::Error otherwise). No step is pipelined, so `stream`
// fidelity lowers exactly as `step`.
void LowerRecursiveHalvingDoubling(const LowerArgs& a, FlowBuilder* b);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_RECURSIVE_HALVING_DOUBLING_H_
