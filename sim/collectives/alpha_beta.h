// The tuner's alpha-beta model (sim/collectives/lowering.h, PredictCollectiveSeconds): the
// group's figures, once, with the protocol's latencies and rates for one algorithm, which each
// algorithm's prediction (its registry entry, sim/collectives/registry.h) turns into a time
// the way its flows run on an uncontended cluster, in the spirit of NCCL's tuning model
// (src/graph/tuning.cc): base latency + step latencies along the critical path + bytes on the
// wire over the bottleneck bandwidth.
#ifndef STRATASIM_SIM_COLLECTIVES_ALPHA_BETA_H_
#define STRATASIM_SIM_COLLECTIVES_ALPHA_BETA_H_

#include "core/task_graph.h"
#include "sim/collectives/group_view.h"
#include "sim/collectives/protocol.h"

namespace stratasim::sim {

struct CollectiveAlgorithm;

struct AlphaBeta {
  int n = 0;              // members
  int servers = 1;        // distinct servers
  int per_server = 1;     // most members on one server
  int nics = 1;           // NICs used per server
  int nvlink_cycles = 0;  // GroupView::nvlink_cycles when the algorithm's hops follow them
  bool multi = false;     // spans servers
  double base_s = 0;
  double intra_step_s = 0;  // hop latency + protocol step latency
  double inter_step_s = 0;
  double intra_Bps = 0;
  double inter_Bps = 0;      // one NIC
  double inter_gpu_Bps = 0;  // a NIC's share per GPU when all GPUs of a server send across
  double wire = 1;           // protocol bytes factor
  // Most wire bytes/s one flow (one channel's transfer over a hop) moves with the protocol:
  // ProtocolMaxRateBps, infinite for Simple.
  double flow_intra_Bps = 0;
  double flow_inter_Bps = 0;
};

AlphaBeta MakeAlphaBeta(const GroupView& view, const CollectiveAlgorithm& algorithm,
                        CollectiveKind kind, Protocol p);

// What an algorithm's prediction receives: the collective, where its members sit, the model
// of its figures and the channels (>= 1; 1 for algorithms without channels). It is called for
// two or more members only.
struct PredictArgs {
  const Collective& c;
  const GroupView& view;
  const AlphaBeta& m;
  int channels = 1;

  double wire_bytes() const { return c.bytes * m.wire; }  // the buffer, as the protocol sends it
};

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_ALPHA_BETA_H_
