// Builds the SimGrid platform of a cluster in C++ (no XML).
//
//  network (star zone; its centre is the single switch, or the spine)
//   ├── leaf0 (star zone; centre = leaf switch)   ── leaf-spine: servers 0..k-1 under leaf 0
//   │    ├── s0g0 zone: host s0g0 ── router (empty)    rail-optimized: NIC k of every server
//   │    ├── s0g1 zone ...                              under leaf k
//   │    └── router leaf0_gw ── leaf0_uplink (up/down) ═ spine
//   ├── leaf1 ...
//   └── s0cpu0 zone, s0cpu1 zone (CPU sockets: host<->device copies, and host-run tasks)
//
//  A GPU's route to its star centre is its path to its NIC: [PCIe links..] nic_up (and back:
//  nic_down [PCIe links..]). Switch latencies ride on links that exist anyway: the first
//  switch's on nic_up, the spine's on a leaf uplink's up direction, the destination leaf's on
//  its down direction. Routes inside a server are bypass routes between the endpoint zones,
//  at their common ancestor:
//
//     g0 ══nvs══╗                      NVSwitch: every GPU has its own port (up and down links)
//     g1 ══nvs══╬═ NVSwitch (non-blocking, no link of its own)
//     g0 ──nvl── g1                    NVLink: a direct link per connected pair and direction
//     g0 ──pcie── PCIe sw0 ──uplink── CPU socket0 ══socket link══ CPU socket1 ── PCIe sw1 ...
//     nic0 under the PCIe switch of the first GPU it serves
//
// Every connection is full duplex: each direction is its own SHARED link, so traffic one way
// does not slow traffic the other way, and flows in one direction share bandwidth max-min
// (SimGrid CM02). GPU-to-GPU routes inside a server prefer NVSwitch, then a direct NVLink, then
// the PCIe tree. A GPU reaches the network through the NIC serving its block of GPUs.
// A CPU socket reaches the network through the first NIC under its PCIe tree (NIC 0 if none is):
// down its switch's uplink, then the NIC, so that its traffic contends with the GPUs' there
// (without a PCIe section: the NIC alone, as the socket's own PCIe link to it is not modelled).
// Without a PCIe section, a GPU reaches its NIC and its host CPU directly (a dedicated PCIe
// switch per GPU/NIC pair, as in DGX servers), over a host link of PCIe 4.0 x16 bandwidth.
// A leaf's uplinks to the spines are one aggregated duplex link (capacity = the NIC bandwidth
// under the leaf / oversubscription), not per-spine ECMP paths. Switches are non-blocking and
// have no link of their own (see above for their latency).
// Routes cost O(1) each to declare: no N^2 table, so 1,024-GPU platforms build in milliseconds.
#ifndef STRATASIM_SIM_PLATFORM_H_
#define STRATASIM_SIM_PLATFORM_H_

#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <vector>

#include "core/cluster.h"

namespace stratasim::sim {

struct Platform {
  std::vector<simgrid::s4u::Host*> gpus;       // by global rank
  std::vector<simgrid::s4u::Host*> host_cpus;  // by global rank: the CPU socket owning the GPU
  // Speed given to each GPU host (FLOP/s): its dense FP16 tensor peak, or FP32 if it has no
  // FP16 units. The executor expresses each task's modelled duration in this unit.
  std::vector<double> gpu_speed;
  // Each link's latency. SimGrid's own link latencies are set to 0 once the platform is built,
  // and the executor accounts for a route's latency itself: CM02 weights a flow's share of a
  // link by the inverse of its route latency (TCP's RTT unfairness), which NVLink, PCIe and
  // InfiniBand, sharing by credits per flow, do not. A Comm's latency phase moved no data and
  // held no bandwidth, so the same time is paid outside it: as a timer before a point-to-point
  // transfer or a copy, and as the delay between a collective flow's transfer and its data's
  // arrival (sim/collectives/flow_program.h).
  std::unordered_map<const simgrid::s4u::Link*, double> link_latency_s;
};

// Sum of the latencies of the links from `src` to `dst` (Platform::link_latency_s).
double RouteLatencySeconds(const Platform& p, simgrid::s4u::Host* src, simgrid::s4u::Host* dst);

// PCIe 4.0 x16 per direction (PCI-SIG: 16 GT/s x 16 lanes, 128b/130b) ≈ 31.5 GB/s; used for
// host<->device copies on servers described without a PCIe tree.
inline constexpr double kDefaultHostLinkBps = 31.5e9;
inline constexpr double kDefaultHostLinkLatencyS = 1e-6;

// Memory bandwidth of a host CPU socket, which bounds the memory-bound kernels that run there
// (Task::on_host: a parameter-server shard's update): DDR4-3200 on 8 channels, 3200 MT/s x
// 8 bytes x 8 = 204.8 GB/s per socket (AMD EPYC 7003 and Intel Xeon 3rd-gen Scalable
// datasheets: 8 DDR4-3200 channels per socket). Peak, as the GPUs' figures are.
inline constexpr double kHostMemoryBps = 204.8e9;

// Builds the platform into the current Engine (which must exist and not be running). Checks
// the cluster first and throws stratasim::Error rather than let SimGrid abort on a bad route.
Platform BuildPlatform(const ClusterSpec& cluster);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_PLATFORM_H_
