// Link costs the baseline planners (DAPPLE, Piper) price their plans with, from the cluster view
// (planner.h) instead of the papers' hard-coded constants (DAPPLE's planner: NVLink 25 GB/s,
// Ethernet 3 GB/s for NCCL; Piper: one bandwidth for every link). A flow between two GPUs of one
// server runs at the server's GPU-to-GPU bandwidth; a flow between servers at its NICs'
// bandwidth, shared by the concurrent flows that leave or enter through the same NIC.
#ifndef STRATASIM_STRATEGIES_PLANNERS_LINK_COSTS_H_
#define STRATASIM_STRATEGIES_PLANNERS_LINK_COSTS_H_

#include <utility>
#include <vector>

#include "strategies/planners/planner.h"

namespace stratasim::planners {

// Seconds for the concurrent point-to-point transfers `pairs` (sender rank, receiver rank) of
// `bytes` each: the slowest flow, its latency included. 0 when there are no pairs.
double TransferSeconds(const ClusterView& c, const std::vector<std::pair<int, int>>& pairs,
                       double bytes);

// TransferSeconds of fixed pairs for any size: the flows' distinct (latency, seconds per byte).
class TransferCost {
 public:
  TransferCost() = default;
  TransferCost(const ClusterView& c, const std::vector<std::pair<int, int>>& pairs);
  double Seconds(double bytes) const;
  bool operator<(const TransferCost& o) const { return terms_ < o.terms_; }
  bool operator==(const TransferCost& o) const { return terms_ == o.terms_; }

 private:
  std::vector<std::pair<double, double>> terms_;
};

// Seconds for the concurrent ring all-reduces of `bytes` over each of `groups` (ranks):
// 2 (n - 1) / n x bytes over the ring's slowest link, plus 2 (n - 1) latencies. A group inside
// one server uses its GPU-to-GPU bandwidth; a group across servers its members' NICs, each
// shared by the members of all groups that send through it.
double AllReduceSeconds(const ClusterView& c, const std::vector<std::vector<int>>& groups,
                        double bytes);

// The bandwidth AllReduceSeconds prices `groups` with (bytes per second).
double AllReduceBps(const ClusterView& c, const std::vector<std::vector<int>>& groups);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_LINK_COSTS_H_
