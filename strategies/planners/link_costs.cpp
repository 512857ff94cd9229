// Link costs of the baseline planners (link_costs.h).
#include "strategies/planners/link_costs.h"

#include <algorithm>
#include <limits>
#include <map>

namespace stratasim::planners {
namespace {

bool SameServer(const ClusterView& c, const std::vector<int>& ranks) {
  for (int r : ranks) {
    if (c.devices[r].server != c.devices[ranks.front()].server) return false;
  }
  return true;
}

}  // namespace

TransferCost::TransferCost(const ClusterView& c, const std::vector<std::pair<int, int>>& pairs) {
  // Cross-server flows per NIC, counting each direction's end: a NIC carries the flows that
  // leave through it and, separately, those that enter.
  std::map<int, int> out, in;
  for (const auto& [a, b] : pairs) {
    if (c.devices[a].server == c.devices[b].server) continue;
    ++out[c.devices[a].nic];
    ++in[c.devices[b].nic];
  }
  for (const auto& [a, b] : pairs) {
    const ClusterView::Device& from = c.devices[a];
    const ClusterView::Device& to = c.devices[b];
    if (from.server == to.server) {
      terms_.emplace_back(c.intra_latency_s, 1 / c.intra_Bps[from.server]);
    } else {
      const double bps = std::min(c.nic_Bps[from.nic] / out[from.nic],  //
                                  c.nic_Bps[to.nic] / in[to.nic]);
      terms_.emplace_back(c.inter_latency_s, 1 / bps);
    }
  }
  std::sort(terms_.begin(), terms_.end());
  terms_.erase(std::unique(terms_.begin(), terms_.end()), terms_.end());
}

double TransferCost::Seconds(double bytes) const {
  double slowest = 0;
  for (const auto& [latency, per_byte] : terms_) {
    slowest = std::max(slowest, latency + bytes * per_byte);
  }
  return slowest;
}

double TransferSeconds(const ClusterView& c, const std::vector<std::pair<int, int>>& pairs,
                       double bytes) {
  return TransferCost(c, pairs).Seconds(bytes);
}

double AllReduceBps(const ClusterView& c, const std::vector<std::vector<int>>& groups) {
  std::map<int, int> sharing;  // NIC -> members of cross-server groups sending through it
  for (const std::vector<int>& g : groups) {
    if (g.size() < 2 || SameServer(c, g)) continue;
    for (int r : g) ++sharing[c.devices[r].nic];
  }
  double bps = std::numeric_limits<double>::infinity();
  for (const std::vector<int>& g : groups) {
    if (g.size() < 2) continue;
    if (SameServer(c, g)) {
      bps = std::min(bps, c.intra_Bps[c.devices[g.front()].server]);
      continue;
    }
    for (int r : g) {
      const int nic = c.devices[r].nic;
      bps = std::min(bps, c.nic_Bps[nic] / sharing[nic]);
    }
  }
  return bps;
}

double AllReduceSeconds(const ClusterView& c, const std::vector<std::vector<int>>& groups,
                        double bytes) {
  const double bps = AllReduceBps(c, groups);
  double seconds = 0;
  for (const std::vector<int>& g : groups) {
    const int n = static_cast<int>(g.size());
    if (n < 2) continue;
    const double latency = SameServer(c, g) ? c.intra_latency_s : c.inter_latency_s;
    seconds = std::max(seconds, 2.0 * (n - 1) / n * bytes / bps + 2.0 * (n - 1) * latency);
  }
  return seconds;
}

}  // namespace stratasim::planners
