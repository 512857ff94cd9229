// NCCL's protocols and their cost, applied to a lowered flow program.
//
// Wire bytes (NCCL's LL and LL128 primitives, prims_ll.h and prims_ll128.h in its device
// code; NCCL_PROTO in the NCCL environment-variable docs):
//   LL      every 8-byte word carries 4 bytes of data and a 4-byte flag: 2x the bytes, but no
//           memory fence per step, hence the lowest latency;
//   LL128   every 128-byte line carries 120 bytes of data and an 8-byte flag: 128/120 x;
//   Simple  plain data with a fence and flag per chunk: 1x the bytes, the highest latency.
//
// Latencies (NCCL src/graph/tuning.cc, the baseLat and hwLat tables at commit 01afd20 of
// NVIDIA/nccl, in microseconds): a base latency paid once per collective, and a latency per
// algorithm step that depends on the hop (NVLink, PCI, network):
//                      base        NVLink step     PCI step       network step
//   tree  LL/LL128/S   4.4/4.4/0   .52/1.2/6.2*    1.0/1.9/6.2*   5.0/8.5/6.3*
//   ring  LL/LL128/S   3.6/10/8.4  .47/1.9/3.4     1.0/2.5/5.7    2.7/4.0/9.6
// *NCCL's tree/Simple figures (28, 28, 50 us) are "the latency of a 256kB chunk, ~ base lat +
// 256k/12GB/s (+ 256k/12GB/s for the network)" (comment in tuning.cc); the simulator moves the
// chunk itself, so it keeps only the remainder: 28 - 21.8 = 6.2 and 50 - 43.7 = 6.3.
// The ring figures serve every algorithm built of point-to-point steps (ring, chains,
// hierarchical, recursive halving-doubling, direct, pairwise); the tree figures serve "tree"
// (each algorithm's registry entry names its figures: CollectiveAlgorithm::nccl).
// NVSwitch and direct NVLink hops take the NVLink column. The platform's route latency is paid
// on top by the executor, so a calibration may want to lower these.
//
// Throughput per channel (same tuning.cc, ncclTopoTuneModel): LL and LL128 move data with
// flagged stores that every receiving thread polls, so one channel cannot fill a fast link.
// NCCL's model caps their bus bandwidth:
//   LL     ring: link bandwidth x 1/4 across servers or for all-reduce/reduce, x 1/3 otherwise;
//          tree: x 1/3.8;
//   LL128  ring: at most ll128MaxBwPerCh per channel, by collective (GB/s of data): broadcast
//          18.8, reduce 12.0, all-gather 18.3, reduce-scatter 15.2, all-reduce 16.7;
//          tree: x 7/9 of that.
// The tuner (hence the automatic protocol choice, and `analytic` fidelity) bounds each
// channel's flow over a hop by these rates, in wire bytes: LL's data bound x 2, LL128's
// x 128/120. Kinds NCCL's table lacks (all-to-all, gather, scatter: copies without reduction)
// take the all-gather figure. The flows of `step` and `stream` fidelity are NOT bounded:
// SimGrid 3.32 cannot bound the rate of a host-to-host Comm (Comm::set_rate is ignored before
// the source is set and aborts after), so a forced LL/LL128 collective runs at link speed
// there. Not modelled either: NCCL's 0.7 LL128 discount with one GPU per server, the tree's
// 0.9 factor and correction table, and the 1.8x LL intra-server latency across servers.
//
// Measured hops (`calibrate --fabric`, core/calibration.h `fabric:`; GroupView::measured_*):
// where the group's servers carry a measured per-hop latency L for the protocol, a step over
// that hop costs L in all (its flow's delay is L less the route latency SimGrid adds, at least
// 0) and, when every hop kind the group uses is measured, no base latency is added: the fit
// folds NCCL's per-collective base into its per-hop figure (validate/fabric_fit.h).
#ifndef STRATASIM_SIM_COLLECTIVES_PROTOCOL_H_
#define STRATASIM_SIM_COLLECTIVES_PROTOCOL_H_

#include <optional>
#include <string>
#include <string_view>

#include "core/task_graph.h"
#include "sim/collectives/flow_builder.h"
#include "sim/collectives/group_view.h"

namespace stratasim::sim {

enum class Protocol { kLL, kLL128, kSimple };
enum class HopKind { kNvLink, kPcie, kNet };
// Whose figures of the table above an algorithm's steps pay (CollectiveAlgorithm::nccl).
enum class NcclAlgorithm { kRing, kTree };

// "ll", "ll128", "simple"; throws stratasim::Error naming the known ones otherwise.
Protocol ParseProtocol(const std::string& name);
std::string_view ProtocolName(Protocol p);

// Bytes on the wire per byte of data.
double WireBytesFactor(Protocol p);

double BaseLatencySeconds(NcclAlgorithm algorithm, Protocol p);
double StepLatencySeconds(NcclAlgorithm algorithm, Protocol p, HopKind hop);

// The hop between members a and b: network across servers, else the view's intra fabric.
HopKind HopBetween(const GroupView& view, int a, int b);
HopKind IntraHop(const GroupView& view);

// Bytes per second on the wire one channel of an algorithm with `algorithm`'s figures can move with
// protocol `p` for collective `kind` over a hop of `hop_Bps` (per direction), `multi_server` if the
// collective spans servers; 0 for no bound (Simple). See the table above.
double ProtocolMaxRateBps(Protocol p, NcclAlgorithm algorithm, CollectiveKind kind,
                          bool multi_server, double hop_Bps);

// The measured per-hop latency of `hop` with protocol `p`, if the group has one (see above).
std::optional<double> MeasuredStepSeconds(const GroupView& view, Protocol p, HopKind hop);
// Whether every hop kind the group uses has a measured latency with `p`.
bool MeasuredCoversGroup(const GroupView& view, Protocol p);
// The route latency SimGrid adds to one step over `hop` (GroupView's figures).
double RouteLatencySeconds(const GroupView& view, HopKind hop);
// One step's delay beyond the route latency: measured - route (>= 0), or the documented one.
double StepDelaySeconds(const GroupView& view, NcclAlgorithm algorithm, Protocol p, HopKind hop);
// The base latency paid once per collective: 0 when MeasuredCoversGroup.
double GroupBaseLatencySeconds(const GroupView& view, NcclAlgorithm algorithm, Protocol p);

// Inflates every flow's bytes by WireBytesFactor and sets its delay_s to its latency_steps x
// the step latency of its hop, plus the base latency on flows without dependencies (those
// that start the collective).
void ApplyProtocol(const GroupView& view, NcclAlgorithm algorithm, Protocol p, FlowBuilder* b);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_PROTOCOL_H_
