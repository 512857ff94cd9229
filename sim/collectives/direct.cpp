#include "sim/collectives/direct.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "sim/collectives/registry.h"

namespace stratasim::sim {

void CheckAllToAllMatrix(const Collective& c) {
  const size_t n = c.ranks.size();
  if (c.kind == CollectiveKind::kAllToAllV && c.matrix.size() != n * n) {
    throw Error("all_to_all_v of " + std::to_string(n) + " members needs a " + std::to_string(n) +
                "x" + std::to_string(n) + " size matrix, got " + std::to_string(c.matrix.size()) +
                " entries");
  }
}

double AllToAllBytes(const Collective& c, int i, int j) {
  const int n = static_cast<int>(c.ranks.size());
  return c.kind == CollectiveKind::kAllToAllV ? c.matrix[static_cast<size_t>(i) * n + j]
                                              : c.bytes / n;
}

void LowerDirect(const LowerArgs& a, FlowBuilder* b) {
  const int n = a.n();
  const Collective& c = a.c;
  switch (c.kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather: {
      const double each = c.kind == CollectiveKind::kAllReduce ? c.bytes : c.bytes / n;
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          if (i != j) b->Add(i, j, each, {});
        }
      }
      return;
    }
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter:
      for (int i = 0; i < n; ++i) {
        if (i == a.root) continue;
        if (c.kind == CollectiveKind::kGather)
          b->Add(i, a.root, c.bytes / n, {});
        else
          b->Add(a.root, i, c.bytes / n, {});
      }
      return;
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllV:
      CheckAllToAllMatrix(c);
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          const double bytes = AllToAllBytes(c, i, j);
          if (i != j && bytes > 0) b->Add(i, j, bytes, {});
        }
      }
      return;
    default:
      throw Error("direct has no lowering for " + std::string(ToString(c.kind)));
  }
}

namespace {

// Per-member busiest link time of a set of direct flows, from bytes(i, j).
template <typename Bytes>
double BusiestLink(const AlphaBeta& m, const GroupView& view, Bytes bytes) {
  std::vector<double> intra_out(m.n), inter_out(m.n), intra_in(m.n), inter_in(m.n);
  double slowest_flow = 0;  // a flow alone on its links still moves at most the protocol's rate
  for (int i = 0; i < m.n; ++i) {
    for (int j = 0; j < m.n; ++j) {
      if (i == j) continue;
      const double b = bytes(i, j) * m.wire;
      const bool across = view.members[i].server != view.members[j].server;
      (across ? inter_out : intra_out)[i] += b;
      (across ? inter_in : intra_in)[j] += b;
      slowest_flow = std::max(slowest_flow, b / (across ? m.flow_inter_Bps : m.flow_intra_Bps));
    }
  }
  double t = slowest_flow;
  for (int i = 0; i < m.n; ++i) {
    t = std::max({t, intra_out[i] / m.intra_Bps, intra_in[i] / m.intra_Bps,
                  inter_out[i] / m.inter_gpu_Bps, inter_in[i] / m.inter_gpu_Bps});
  }
  // Inside a PCIe tree the flows between switches share the switches' uplinks, and those
  // between sockets the socket link (per direction), whatever each flow's own path allows.
  if (view.pcie_uplink_Bps > 0) {
    std::map<std::tuple<int, int, int>, double> uplink, socket;  // (server, index, direction)
    for (int i = 0; i < m.n; ++i) {
      for (int j = 0; j < m.n; ++j) {
        const GroupMember &a = view.members[i], &b = view.members[j];
        if (i == j || a.server != b.server || a.pcie_switch < 0 || b.pcie_switch < 0) continue;
        if (std::count(a.nvlink_locals.begin(), a.nvlink_locals.end(), b.local)) continue;
        const double bytes_ij = bytes(i, j) * m.wire;
        if (a.pcie_switch != b.pcie_switch) {
          uplink[{a.server, a.pcie_switch, 0}] += bytes_ij;
          uplink[{b.server, b.pcie_switch, 1}] += bytes_ij;
        }
        if (a.socket != b.socket) socket[{a.server, a.socket, 0}] += bytes_ij;
      }
    }
    for (const auto& [where, load] : uplink) t = std::max(t, load / view.pcie_uplink_Bps);
    for (const auto& [where, load] : socket) t = std::max(t, load / view.socket_link_Bps);
  }
  return t;
}

double PredictDirect(const PredictArgs& a) {
  const AlphaBeta& m = a.m;
  const Collective& c = a.c;
  const int n = m.n;
  const double hop_step = m.multi ? m.inter_step_s : m.intra_step_s;
  const int root =
      static_cast<int>(std::find(c.ranks.begin(), c.ranks.end(), c.root) - c.ranks.begin());
  auto bytes = [&](int i, int j) -> double {
    switch (c.kind) {
      case CollectiveKind::kAllReduce:
        return c.bytes;
      case CollectiveKind::kGather:
        return j == root ? c.bytes / n : 0;
      case CollectiveKind::kScatter:
        return i == root ? c.bytes / n : 0;
      case CollectiveKind::kAllToAll:
      case CollectiveKind::kAllToAllV:
        return AllToAllBytes(c, i, j);
      default:
        return c.bytes / n;
    }
  };
  return m.base_s + hop_step + BusiestLink(m, a.view, bytes);
}

}  // namespace

// NCCL's one-shot kernels (and grouped send/recv for all-to-all): auto may pick it.
const CollectiveAlgorithm collective_algorithms::direct{
    NcclAlgorithm::kRing,  // nccl
    false,                 // uses_channels
    true,                  // chosen_by_auto
    nullptr,               // auto_fits
    false,                 // neighbour_steps
    LowerDirect,           // lower
    PredictDirect,         // predict
};

}  // namespace stratasim::sim
