// What a collective becomes in the simulator: point-to-point flows between its members, with
// the dependencies its algorithm imposes. Pure data, produced by the lowerings in
// sim/collectives/ and run by sim/executor.cpp, which turns each flow into a SimGrid Comm along
// the platform's route (so collectives share links with everything else that runs).
#ifndef STRATASIM_SIM_COLLECTIVES_FLOW_PROGRAM_H_
#define STRATASIM_SIM_COLLECTIVES_FLOW_PROGRAM_H_

#include <string>
#include <vector>

namespace stratasim::sim {

struct Flow {
  int src = 0;  // member indices (positions in Collective::ranks), not ranks
  int dst = 0;
  double bytes = 0;  // on the wire, protocol overhead included
  // Flows that must complete before this one starts. A flow completes when its data has
  // reached the receiver: its transfer, then its route latency (and any extra latencies).
  std::vector<int> deps;
  // One of `deps`, or -1: the flow ahead of this one on the same connection (same src and
  // dst), e.g. the previous chunk of a pipeline. This flow needs the connection, not that
  // flow's data, so it may start as soon as that flow's transfer has ended: a connection keeps
  // sending while earlier chunks are still on their way, as NCCL's NCCL_STEPS slots let it.
  int follows = -1;
  // `stream` fidelity: one flow stands for `1 + extra_route_latencies` pipelined steps over
  // the same edge; the executor adds that many more route latencies after the transfer.
  int extra_route_latencies = 0;
  // `stream` fidelity, ring phases: the flows of one ring share a latency group. A ring step's
  // data crosses every edge in turn, so the latency on its critical path is the ring's mean hop
  // latency, not the latency of the edge a flow stands for; and the slow edge overlaps that
  // path with its transfers. The executor completes a group's flows together
  // (sim/latency_groups.h). Charging each edge its own latency, a 1 GiB all-reduce on 1,024
  // GPUs (one NIC hop in 8) took 44.7 ms in stream against 27.2 ms in step.
  // -1: no group, the flow pays its own.
  int latency_group = -1;
  // Fixed software cost paid before the flow starts: the per-step latency of the protocol
  // (NCCL kernel synchronisation), in seconds.
  double delay_s = 0;
};

// A flow waits until both its members have joined the collective (their member task became
// ready), as an NCCL kernel moves data only once both ends run. A member finishes when every
// flow it sends or receives has completed (a member without flows finishes on joining).
struct FlowProgram {
  std::vector<Flow> flows;
  std::string algorithm;  // the algorithm actually used ("ring", "tree", ...)
  std::string protocol;   // "ll", "ll128", "simple"
  int channels = 1;
};

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_FLOW_PROGRAM_H_
