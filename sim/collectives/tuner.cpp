// ChooseCollective and PredictCollectiveSeconds (declared in sim/collectives/lowering.h): an
// alpha-beta model of each algorithm as the flows of this folder run it on an uncontended
// cluster, in the spirit of NCCL's tuning model (src/graph/tuning.cc): time = base latency +
// per-step latencies along the critical path + bytes on the wire / bottleneck bandwidth.
#include "sim/collectives/tuner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include "core/collective_names.h"
#include "core/error.h"
#include "sim/collectives/algorithm_check.h"
#include "sim/collectives/direct.h"
#include "sim/collectives/flow_builder.h"
#include "sim/collectives/hierarchical.h"
#include "sim/collectives/lowering.h"
#include "sim/collectives/member_order.h"
#include "sim/collectives/protocol.h"
#include "sim/collectives/tree.h"

namespace stratasim::sim {

int AutoChannels(const GroupView& view) {
  const int nvlink_lanes = 2 * view.nvlink_cycles;  // each cycle both ways (ChannelRing)
  if (view.num_servers <= 1) return std::max(1, nvlink_lanes);
  return std::clamp(std::max(view.max_nics_per_server, nvlink_lanes), 1, kMaxChannels);
}

bool ChosenByAuto(const std::string& algorithm) {
  return algorithm != "recursive_halving_doubling" && algorithm != "pairwise";
}

bool UsesChannels(const std::string& algorithm) {
  return algorithm == "ring" || algorithm == "tree";
}

namespace {

// The view's numbers, once, with the chosen protocol's latencies added to the hops'.
struct Model {
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

double OrInfinity(double bound_Bps) {
  return bound_Bps > 0 ? bound_Bps : std::numeric_limits<double>::infinity();
}

Model MakeModel(const GroupView& view, const std::string& algorithm, CollectiveKind kind,
                Protocol p) {
  Model m;
  m.n = static_cast<int>(view.members.size());
  const auto blocks = ServerBlocks(view);
  m.servers = std::max<int>(1, blocks.size());
  for (const auto& b : blocks) m.per_server = std::max<int>(m.per_server, b.size());
  m.nics = std::max(1, view.max_nics_per_server);
  m.multi = m.servers > 1;
  m.base_s = BaseLatencySeconds(algorithm, p);
  // Rings, trees' chains and hierarchical's rings step between neighbours of ServerBlocks,
  // which follow a partial NVLink mesh where there is one (GroupView::ring_intra_*).
  const bool neighbours = algorithm == "ring" || algorithm == "tree" || algorithm == "hierarchical";
  const double intra_latency_s = neighbours ? view.ring_intra_latency_s : view.intra_latency_s;
  const HopKind intra_hop = neighbours && view.ring_intra_fabric == IntraFabric::kNvLink
                                ? HopKind::kNvLink
                                : IntraHop(view);
  m.intra_step_s = intra_latency_s + StepLatencySeconds(algorithm, p, intra_hop);
  m.inter_step_s = view.inter_latency_s + StepLatencySeconds(algorithm, p, HopKind::kNet);
  m.intra_Bps = neighbours ? view.ring_intra_Bps : view.intra_Bps;
  m.nvlink_cycles = neighbours ? view.nvlink_cycles : 0;
  m.inter_Bps = view.inter_Bps;
  m.inter_gpu_Bps = view.nic_share_per_member_Bps;
  m.wire = WireBytesFactor(p);
  m.flow_intra_Bps = OrInfinity(ProtocolMaxRateBps(p, algorithm, kind, m.multi, m.intra_Bps));
  m.flow_inter_Bps = OrInfinity(ProtocolMaxRateBps(p, algorithm, kind, m.multi, view.inter_Bps));
  return m;
}

// Ring steps: an edge runs up to kRingSlots steps ahead, so the latency is that of the hops a
// piece of data crosses (NCCL's model: steps - inter_steps intra-server hops), and the time on
// the wire that of the bottleneck: C channels share each GPU's intra link (or, along NVLink
// cycles, spread over 2 x cycles NVLinks out of each GPU, the busiest carrying ceil(C / lanes))
// and use up to C NICs, each channel's flow at most the protocol's rate per channel.
// What C channels of a ring or chain move out of each GPU inside a server: one intra link
// shared by all, or along NVLink cycles min(C, 2 x cycles) NVLinks (ChannelRing), the busiest
// carrying ceil(C / lanes) channels.
double RingIntraBps(const Model& m, int channels) {
  const int lanes = std::min(channels, 2 * m.nvlink_cycles);
  if (lanes <= 1) return m.intra_Bps;
  return m.intra_Bps * channels / ((channels + lanes - 1) / lanes);
}

// Time on the busiest intra-server link of `instances` chains through a server, each moving
// `bytes` over every hop in each of `directions` (1: a rooted tree; 2: an all-reduce tree, up
// and down). Over one link per GPU (an NVSwitch port, PCIe) a GPU sends all of it. Along NVLink
// cycles instance i takes cycle i mod cycles (InstanceChain, CycleChain), each direction on
// NVLinks of its own, so each NVLink direction carries the instances of its cycle once.
double ChainLinkSeconds(const Model& m, int instances, double bytes, int directions) {
  if (m.nvlink_cycles <= 0) {
    return directions * instances * bytes / std::min(m.intra_Bps, instances * m.flow_intra_Bps);
  }
  const int per_cycle = (instances + m.nvlink_cycles - 1) / m.nvlink_cycles;
  return per_cycle * bytes / std::min(m.intra_Bps, per_cycle * m.flow_intra_Bps);
}

double Ring(const Model& m, int steps, double step_bytes, int channels) {
  const double intra_bw = std::min(RingIntraBps(m, channels), channels * m.flow_intra_Bps);
  const double inter_bw =
      std::min(m.inter_Bps * std::min(channels, m.nics), channels * m.flow_inter_Bps);
  const double bw = m.multi ? std::min(intra_bw, inter_bw) : intra_bw;
  const int inter = m.multi ? static_cast<int>(std::lround(1.0 * steps * m.servers / m.n)) : 0;
  return (steps - inter) * m.intra_step_s + inter * m.inter_step_s + steps * step_bytes / bw;
}

// A pipeline of `hops` (inter of them across servers) in `chunks` chunks: the first chunk pays
// every hop's step latency and its transfer alone on the hop (`fill_s_*`: the channels' chains
// start together but soon run on different GPUs), each later chunk the slowest hop's transfer
// with every channel on the link (`period_s_*`): a hop sends its chunks back to back, their
// route latencies overlapping the transfers behind them (Flow::follows).
struct PipelineHop {
  int hops = 0;
  double fill_s = 0;    // one chunk alone on the hop
  double period_s = 0;  // one chunk with every channel's chunk sharing the hop
};
double Pipeline(const Model& m, const PipelineHop& intra, const PipelineHop& inter, int chunks) {
  const double t =
      intra.hops * (m.intra_step_s + intra.fill_s) + inter.hops * (m.inter_step_s + inter.fill_s);
  double slowest = intra.hops > 0 ? intra.period_s : 0;
  if (inter.hops > 0) slowest = std::max(slowest, inter.period_s);
  return t + (chunks - 1) * slowest;
}

int TreeHeight(int nodes) {
  const std::vector<int> parent = BinaryTreeParents(nodes);
  int height = 0;
  for (int v = 0; v < nodes; ++v) {
    int h = 0;
    for (int u = v; parent[u] >= 0; u = parent[u]) ++h;
    height = std::max(height, h);
  }
  return height;
}

// Per-member busiest link time of a set of direct flows, from bytes(i, j).
template <typename Bytes>
double BusiestLink(const Model& m, const GroupView& view, Bytes bytes) {
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

double Predict(const Collective& c, const GroupView& view, const CollectiveChoice& choice) {
  const Protocol p = ParseProtocol(choice.protocol);
  const Model m = MakeModel(view, choice.algorithm, c.kind, p);
  const int n = m.n, s = m.servers, k = m.per_server;
  if (n < 2) return 0;
  const int C = std::max(1, choice.channels);
  const double S = c.bytes * m.wire;
  const std::string& a = choice.algorithm;
  const CollectiveKind kind = c.kind;
  const double hop_step = m.multi ? m.inter_step_s : m.intra_step_s;
  const double inf = std::numeric_limits<double>::infinity();

  if (a == "ring") {
    if (kind == CollectiveKind::kAllReduce) return m.base_s + Ring(m, 2 * (n - 1), S / n, C);
    if (kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kAllGather) {
      return m.base_s + Ring(m, n - 1, S / n, C);
    }
    // Chain broadcast/reduce: C chains share each intra link, and spread over the NICs.
    const int chunks = PipelineChunks(c.bytes / C, n - 1);
    const double chunk = S / C / chunks;
    const PipelineHop intra{n - s, chunk / std::min(m.intra_Bps, m.flow_intra_Bps),
                            chunk * C / std::min(RingIntraBps(m, C), C * m.flow_intra_Bps)};
    const PipelineHop inter{
        s - 1, chunk / std::min(m.inter_Bps, m.flow_inter_Bps),
        chunk * C / std::min(m.inter_Bps * std::min(C, m.nics), C * m.flow_inter_Bps)};
    return m.base_s + Pipeline(m, intra, inter, chunks);
  }
  if (a == "tree") {
    const int height = TreeHeight(s);
    if (kind == CollectiveKind::kAllReduce) {
      // Two trees of half the buffer per channel, up then down. A member's intra link carries
      // ~2S in all (S/2 up and S/2 down in each tree); a head's NIC up to 3 parts of S/(2C) per
      // tree it is interior in.
      const double intra_s = ChainLinkSeconds(m, 2 * C, S / (2 * C), 2);
      const double inter =
          std::min(std::min(2 * C, m.nics) * m.inter_Bps, 2 * C * m.flow_inter_Bps);
      const double bw_time = std::max(intra_s, m.multi ? 3 * S / inter : 0.0);
      return m.base_s + 2 * ((k - 1) * m.intra_step_s + height * m.inter_step_s) + bw_time;
    }
    const int chunks = PipelineChunks(c.bytes / C, k - 1 + height);
    const double intra = std::min(m.intra_Bps, C * m.flow_intra_Bps);
    const double inter = std::min(std::min(C, m.nics) * m.inter_Bps, C * m.flow_inter_Bps);
    double bw_time = std::max(ChainLinkSeconds(m, C, S / C, 1), m.multi ? 2 * S / inter : 0.0);
    if (m.multi && view.ring_intra_fabric == IntraFabric::kPcie) {
      // The chains run over PCIe, and so does the way to the NIC: a GPU's PCIe link carries
      // S/C of each channel it forwards along its chain, and 3 S/C of each it heads (down the
      // chain and to two child servers). 4 PCIe boxes of 4 GPUs, 4 channels: 1.5 S, as
      // simulated (102.6 ms for 1 GiB against the chain's 68.5 ms).
      const int heads = (C + k - 1) / k;
      bw_time = std::max(bw_time, (3.0 * heads + (C - heads)) * S / C / intra);
    }
    // As a chain (Pipeline): the first chunk crosses the k-1 hops of a server's chain and the
    // tree's height alone on each (an interior head forwards it to two child servers through
    // its one NIC), each later chunk takes the bottleneck's share of bw_time. (Charging bw_time
    // with no fill put a 1 GiB broadcast on 16 DGX-1 with 4 NICs at 43.4 ms; step simulates
    // 48.0 ms, and the chain's 28.8 ms wins.)
    const double chunk = S / C / chunks;
    const double fill = (k - 1) * chunk / std::min(m.intra_Bps, m.flow_intra_Bps) +
                        height * 2 * chunk / std::min(m.inter_Bps, m.flow_inter_Bps);
    return m.base_s + (k - 1) * m.intra_step_s + height * m.inter_step_s + fill +
           (chunks - 1) * bw_time / chunks;
  }
  if (a == "recursive_halving_doubling") {
    int pow2 = 1;
    while (pow2 * 2 <= n) pow2 *= 2;
    double t = m.base_s;
    const double intra = std::min(m.intra_Bps, m.flow_intra_Bps);
    const double inter = std::min(m.inter_gpu_Bps, m.flow_inter_Bps);
    if (pow2 < n) t += 2 * (m.intra_step_s + S / intra);  // fold and unfold
    for (int d = pow2 / 2; d >= 1; d /= 2) {
      const double size = S * d / pow2;  // halving step at distance d; doubling mirrors it
      const bool across = m.multi && d >= k;
      t += 2 * (across ? m.inter_step_s + size / inter : m.intra_step_s + size / intra);
    }
    return t;
  }
  if (a == "hierarchical") {
    if (!HasUniformServers(view)) return inf;
    // One flow per ring edge: each at most the protocol's rate. Along NVLink cycles the
    // server's part runs as 2 x cycles rings (ServerRings), each on NVLinks of its own.
    const int rings = m.nvlink_cycles > 0 ? 2 * m.nvlink_cycles : 1;
    const double intra =
        (k - 1) * (m.intra_step_s + S / k / rings / std::min(m.intra_Bps, m.flow_intra_Bps));
    const double inter =
        (s - 1) * (m.inter_step_s + S / k / s / std::min(m.inter_gpu_Bps, m.flow_inter_Bps));
    return m.base_s + (kind == CollectiveKind::kAllReduce ? 2 * (intra + inter) : intra + inter);
  }
  if (a == "direct") {
    const int root =
        static_cast<int>(std::find(c.ranks.begin(), c.ranks.end(), c.root) - c.ranks.begin());
    auto bytes = [&](int i, int j) -> double {
      switch (kind) {
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
    return m.base_s + hop_step + BusiestLink(m, view, bytes);
  }
  if (a == "pairwise") {
    double t = m.base_s;
    for (int r = 1; r < n; ++r) {
      double round = 0;
      bool any = false;
      for (int i = 0; i < n; ++i) {
        const int j = (i + r) % n;
        const double b = AllToAllBytes(c, i, j) * m.wire;
        if (b <= 0) continue;
        any = true;
        const bool across = view.members[i].server != view.members[j].server;
        round = std::max(round,
                         across ? m.inter_step_s + b / std::min(m.inter_gpu_Bps, m.flow_inter_Bps)
                                : m.intra_step_s + b / std::min(m.intra_Bps, m.flow_intra_Bps));
      }
      if (any) t += round;
    }
    return t;
  }
  return inf;
}

std::string Resolve(const Collective& c, const CollectiveSettings& settings) {
  CheckAlgorithm(c.kind, c.algorithm, true);
  if (c.algorithm != "auto") return c.algorithm;
  auto it = settings.algorithm.find(c.kind);
  if (it == settings.algorithm.end()) return "auto";
  CheckAlgorithm(c.kind, it->second, true);
  return it->second;
}

}  // namespace

double PredictCollectiveSeconds(const Collective& c, const GroupView& view,
                                const CollectiveChoice& choice) {
  CheckAlgorithm(c.kind, choice.algorithm, false);
  CheckAllToAllMatrix(c);
  return Predict(c, view, choice);
}

CollectiveChoice ChooseCollective(const Collective& c, const GroupView& view,
                                  const CollectiveSettings& settings) {
  const std::string algorithm = Resolve(c, settings);
  if (settings.channels < 0 || settings.channels > kMaxChannels) {
    throw Error("collective channels must be 0 (auto) to " + std::to_string(kMaxChannels) +
                ", got " + std::to_string(settings.channels));
  }
  if (settings.protocol != "auto") ParseProtocol(settings.protocol);  // rejects unknown names
  CheckAllToAllMatrix(c);

  std::vector<std::string> algorithms;
  if (algorithm != "auto") {
    algorithms = {algorithm};
  } else {
    for (const std::string& a : CollectiveAlgorithms(c.kind)) {
      if (a == "auto" || !ChosenByAuto(a)) continue;
      // Hierarchical needs equal servers, and is plain ring inside one server.
      if (a == "hierarchical" && (view.num_servers < 2 || !HasUniformServers(view))) continue;
      algorithms.push_back(a);
    }
  }
  const std::vector<std::string> protocols =
      settings.protocol != "auto" ? std::vector<std::string>{settings.protocol}
                                  : std::vector<std::string>{"simple", "ll128", "ll"};
  CollectiveChoice best;
  double best_s = std::numeric_limits<double>::infinity();
  for (const std::string& a : algorithms) {
    const int channels = !UsesChannels(a)        ? 1
                         : settings.channels > 0 ? settings.channels
                                                 : AutoChannels(view);
    for (const std::string& p : protocols) {
      const CollectiveChoice candidate{a, p, channels};
      const double t = Predict(c, view, candidate);
      if (best.algorithm.empty() || t < best_s) {
        best = candidate;
        best_s = t;
      }
    }
  }
  return best;
}

}  // namespace stratasim::sim
