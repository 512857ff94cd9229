// Ring algorithms (Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
// workstations", JPDC 2009; NCCL's ring): all-reduce as reduce-scatter then all-gather,
// reduce-scatter and all-gather alone, and broadcast/reduce as a chunked pipeline along the ring
// from/to the root. With C channels the buffer is split in C parts, one ring each (see
// ChannelRing for how rings stripe over a server's NICs).
#ifndef STRATASIM_SIM_COLLECTIVES_RING_H_
#define STRATASIM_SIM_COLLECTIVES_RING_H_

#include <vector>

#include "sim/collectives/flow_builder.h"
#include "sim/collectives/lower_args.h"

namespace stratasim::sim {

// Steps a ring edge may have in flight: NCCL's NCCL_STEPS (8) buffer slots per connection.
inline constexpr int kRingSlots = 8;

// `steps` ring steps of `step_bytes` over the cyclic `order` (member indices). Step k of the
// member at position j sends to position j+1 once it has received step k-1 from j-1 (the data
// it forwards or reduces) and, from step kRingSlots on, once its send of step k-kRingSlots
// completed (its slot is free again): as in NCCL, a fast edge runs ahead of a slow one by up to
// kRingSlots steps, so hop latencies along the ring overlap. The first step waits for `entry`
// of both ends (empty: no wait). On return `exit` (sized to all members) holds, for each member
// of `order`, its last kRingSlots steps' sends and receives; for a ring of one member, or no
// steps, its entry flows pass through.
// `stream`: one flow per edge of steps x step_bytes, standing for `steps` route latencies.
void RingPhase(const std::vector<int>& order, int steps, double step_bytes, bool stream,
               const MemberFlows& entry, FlowBuilder* b, MemberFlows* exit);

// A pipeline along `path` (member indices) carrying `bytes` in PipelineChunks(bytes) chunks:
// chunk c leaves hop h once it crossed hop h-1 and chunk c-1 has left hop h. `stream`: one flow
// per hop carrying all chunks, all hops at once (the pipeline fill is not modelled).
void ChainPipeline(const std::vector<int>& path, double bytes, bool stream, FlowBuilder* b);

// all_reduce, reduce_scatter, all_gather, broadcast, reduce; throws stratasim::Error otherwise.
void LowerRing(const LowerArgs& a, FlowBuilder* b);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_RING_H_
