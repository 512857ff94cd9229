// The shared links TriRace's plan reasons about (docs/strategies.md, "trirace"): which links a
// transfer between two GPUs crosses at its ends, so that the plan can tell whether a traffic
// class can meet a rank's point-to-point traffic at all. Links are named:
//   "nic S.N out" / "nic S.N in"   NIC N of server S, per direction (GPUs share a server's NICs in
//                                  contiguous blocks, core/cluster.h);
//   "pcie R out" / "pcie R in"     GPU R's own PCIe link, in a server whose GPUs talk over a PCIe
//                                  tree (no NVSwitch, and not every pair NVLink-bridged): its
//                                  GPU-to-GPU and its network traffic both cross it;
//   "nvlink A-B"                   the bridge of a pair (full duplex: one name per direction).
// Switch-internal and spine links are not named: a non-blocking switch shares nothing, and
// oversubscribed spines are left out (a simplification the docs state).
#ifndef STRATASIM_STRATEGIES_PIPELINE_TRIRACE_LINKS_H_
#define STRATASIM_STRATEGIES_PIPELINE_TRIRACE_LINKS_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster.h"

namespace stratasim {

// The named links a transfer from GPU `from` to GPU `to` crosses (empty when from == to).
std::set<std::string> LinksOfTransfer(const ClusterSpec& c, int from, int to);

// The links of a set of directed transfers.
std::set<std::string> LinksOfTransfers(const ClusterSpec& c,
                                       const std::vector<std::pair<int, int>>& transfers);

// The directed transfers of a ring over `ranks` in order (an all-reduce's or all-gather's
// steps), and of an all-to-all among them; only those with `rank` at one end when rank >= 0.
std::vector<std::pair<int, int>> RingTransfers(const std::vector<int>& ranks, int rank = -1);
std::vector<std::pair<int, int>> AllToAllTransfers(const std::vector<int>& ranks, int rank = -1);

// The first link in both sets, or "" when they share none.
std::string SharedLink(const std::set<std::string>& a, const std::set<std::string>& b);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PIPELINE_TRIRACE_LINKS_H_
