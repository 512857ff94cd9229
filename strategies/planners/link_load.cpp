// The load a mapping puts on the shared links (link_load.h).
#include "strategies/planners/link_load.h"

#include <algorithm>

namespace stratasim::planners {
namespace {

// Bytes per direction on each NIC and each PCIe switch's uplink.
class Links {
 public:
  explicit Links(const ClusterView& c) : c_(c) {
    int switches = 0;
    for (const ClusterView::Device& d : c.devices) switches = std::max(switches, d.pcie_switch + 1);
    nic_out_.assign(c.nic_Bps.size(), 0);
    nic_in_ = nic_out_;
    up_.assign(switches, 0);
    down_ = up_;
    switch_server_.assign(switches, 0);
    for (const ClusterView::Device& d : c.devices) {
      if (d.pcie_switch >= 0) switch_server_[d.pcie_switch] = d.server;
    }
  }

  void Send(int from, int to, double bytes) {
    const ClusterView::Device& a = c_.devices[from];
    const ClusterView::Device& b = c_.devices[to];
    if (from == to || bytes <= 0) return;
    const bool servers = a.server != b.server;
    if (servers) {
      nic_out_[a.nic] += bytes;
      nic_in_[b.nic] += bytes;
    }
    // Leaving a switch for another switch or a NIC crosses its uplink.
    if (servers || a.pcie_switch != b.pcie_switch) {
      if (a.pcie_switch >= 0) up_[a.pcie_switch] += bytes;
      if (b.pcie_switch >= 0) down_[b.pcie_switch] += bytes;
    }
  }

  LinkLoad Busiest() const {
    LinkLoad worst;
    auto consider = [&](const std::string& name, double out, double in, double bps) {
      const double bytes = std::max(out, in);
      const double seconds = bps > 0 ? bytes / bps : 0;
      if (bytes > 0 && seconds > worst.seconds) worst = {seconds, bytes, name};
    };
    for (size_t n = 0; n < nic_out_.size(); ++n) {
      consider("NIC " + std::to_string(n), nic_out_[n], nic_in_[n], c_.nic_Bps[n]);
    }
    for (size_t s = 0; s < up_.size(); ++s) {
      consider("PCIe switch " + std::to_string(s), up_[s], down_[s],
               c_.intra_Bps[switch_server_[s]]);
    }
    return worst;
  }

 private:
  const ClusterView& c_;
  std::vector<double> nic_out_, nic_in_, up_, down_;
  std::vector<int> switch_server_;
};

}  // namespace

LinkLoad BusiestLink(const PlannerInput& in, const std::vector<int>& ranks,
                     const std::vector<int>& bounds, double gradient_bytes_per_param) {
  const int stages = in.stages, tensor = in.tensor, data = in.data;
  auto gpu = [&](int r, int s, int t) { return ranks[(r * stages + s) * tensor + t]; };
  Links links(in.cluster);
  for (int s = 0; s < stages; ++s) {
    const int kind = in.cluster.devices[gpu(0, s, 0)].kind;
    const std::vector<BlockCost>& costs = in.profile.costs[kind];
    // Stage-boundary transfers: every micro-batch's activation forward, its gradient back.
    if (s + 1 < stages) {
      const double bytes = in.micro_batches * costs[bounds[s + 1] - 1].output_bytes;
      for (int r = 0; r < data; ++r) {
        for (int t = 0; t < tensor; ++t) {
          links.Send(gpu(r, s, t), gpu(r, s + 1, t), bytes);
          links.Send(gpu(r, s + 1, t), gpu(r, s, t), bytes);
        }
      }
    }
    // The stage's all-reduce over its replicas, one ring per tensor index.
    if (data < 2) continue;
    double params = 0;
    for (int i = bounds[s]; i < bounds[s + 1]; ++i) params += costs[i].params;
    const double edge = 2.0 * (data - 1) / data * params * gradient_bytes_per_param;
    for (int t = 0; t < tensor; ++t) {
      std::vector<int> ring;
      for (int r = 0; r < data; ++r) ring.push_back(gpu(r, s, t));
      std::sort(ring.begin(), ring.end());
      for (int i = 0; i < data; ++i) links.Send(ring[i], ring[(i + 1) % data], edge);
    }
  }
  return links.Busiest();
}

}  // namespace stratasim::planners
