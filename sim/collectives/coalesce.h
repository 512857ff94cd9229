// Stream fidelity: merges the independent flows that share an edge into one flow.
#ifndef STRATASIM_SIM_COLLECTIVES_COALESCE_H_
#define STRATASIM_SIM_COLLECTIVES_COALESCE_H_

#include "sim/collectives/flow_program.h"

namespace stratasim::sim {

// Merges flows that have no dependencies, that no flow depends on, and that share source,
// destination, delay, latency terms and latency group, into one flow carrying their summed bytes,
// in the position of the first. The members' completion times are unchanged when the merged flows
// are alone on their route (they would share it equally and the member waits for all of
// them), but against third-party traffic one flow gets one max-min share where several got
// several: the price of far fewer flows for large multi-channel groups (1,024 GPUs, 8
// channels: a tree all-reduce goes from ~98k to a few thousand flows).
void CoalesceIndependentFlows(FlowProgram* program);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_COALESCE_H_
