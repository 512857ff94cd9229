// HSDP (ISPA 2024; abstract in the project's shared seeds): sharded data parallelism that uses
// the links inside a server (NVLink/NVSwitch, or PCIe) and the NICs at the same time. Each FSDP
// unit's flat parameters are split into
//   fragment A (a fraction alpha): sharded over the G GPUs of each server and replicated across
//     the S servers; its all-gathers and reduce-scatters run inside the server;
//   fragment B (1 - alpha): sharded over the S GPUs of equal local index across the servers
//     (a rail) and replicated across the G rails; its collectives cross the NICs.
// Both fragments' all-gathers (before each forward and backward) and reduce-scatters (after
// each backward) are issued at once on their own streams, so the simulator decides whether the
// links they cross are separate (NVSwitch and a NIC per GPU) or shared (a PCIe tree that NIC
// traffic also crosses). A replicated fragment also needs its reduced shard summed across its
// replicas, once per iteration after the last micro-batch: A's shard over the rail (NICs), B's
// over the server (intra-server links). See docs/strategies.md, "HSDP", for the scheme, its
// memory and bytes per link, and what is assumed where the abstract is silent.
//
// Options: HsdpOptions() (hsdp.cpp). `split: auto` lets the planner (hsdp_planner.h) choose
// alpha per unit with the MILP solver; a number fixes it for every unit.
//
// Streams: "compute", "comm_intra" and "comm_rs_intra" (fragment A's all-gathers, and its
// reduce-scatters and cross-server all-reduces), "comm_inter" and "comm_rs_inter" (fragment
// B's all-gathers, and its reduce-scatters and in-server all-reduces).
//
// Memory per GPU: model states 16 sum_u P_u (alpha_u / G + (1 - alpha_u) / S), between hybrid
// sharding's 16 P / G (alpha = 1) and 16 P / S (alpha = 0), always above FSDP's 16 P / (G S);
// plus what zero3 adds (gathered weights of the units in use, a unit's full gradient).
#ifndef STRATASIM_STRATEGIES_SHARDED_HSDP_H_
#define STRATASIM_STRATEGIES_SHARDED_HSDP_H_

#include "strategies/plan.h"

namespace stratasim {

Plan PlanHsdp(const Scenario& s, const StrategySpec& spec);
const OptionSpecs& HsdpOptions();

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_SHARDED_HSDP_H_
