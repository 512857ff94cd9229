#include "sim/collectives/ring.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "sim/collectives/member_order.h"
#include "sim/collectives/registry.h"

namespace stratasim::sim {

void RingPhase(const std::vector<int>& order, int steps, double step_bytes, bool stream,
               const MemberFlows& entry, FlowBuilder* b, MemberFlows* exit) {
  const int n = static_cast<int>(order.size());
  if (exit != nullptr) {
    for (int m : order) (*exit)[m] = entry.empty() ? std::vector<int>{} : entry[m];
  }
  if (n < 2 || steps < 1) return;
  const int rounds = stream ? 1 : steps;
  const int group = stream ? b->NewLatencyGroup() : -1;
  std::vector<std::vector<int>> id(rounds, std::vector<int>(n));  // [step][position]
  for (int k = 0; k < rounds; ++k) {
    for (int j = 0; j < n; ++j) {
      const int src = order[j], dst = order[(j + 1) % n];
      if (stream) {
        id[k][j] = b->Add(src, dst, steps * step_bytes, Union(entry, {src, dst}), steps, steps - 1);
        b->SetLatencyGroup(id[k][j], group);
      } else if (k == 0) {
        id[k][j] = b->Add(src, dst, step_bytes, Union(entry, {src, dst}));
      } else {
        std::vector<int> deps{id[k - 1][(j + n - 1) % n]};
        if (k >= kRingSlots) deps.push_back(id[k - kRingSlots][j]);
        id[k][j] = b->Add(src, dst, step_bytes, std::move(deps));
      }
    }
  }
  if (exit == nullptr) return;
  // A member is done with the phase when its last sends and receives (up to a window) are.
  for (int j = 0; j < n; ++j) {
    std::vector<int>& out = (*exit)[order[j]];
    out.clear();
    for (int k = std::max(0, rounds - kRingSlots); k < rounds; ++k) {
      out.push_back(id[k][j]);
      out.push_back(id[k][(j + n - 1) % n]);
    }
  }
}

void ChainPipeline(const std::vector<int>& path, double bytes, bool stream, FlowBuilder* b) {
  const int hops = static_cast<int>(path.size()) - 1;
  if (hops < 1) return;
  const int chunks = PipelineChunks(bytes, hops);
  if (stream) {
    // Every edge at once, each paying the chain's latency path (hops step and route
    // latencies of its own kind): what step adds is the fill's transfers.
    for (int h = 0; h < hops; ++h) b->Add(path[h], path[h + 1], bytes, {}, hops, hops - 1);
    return;
  }
  const int first = b->size();
  auto id = [first, hops](int c, int h) { return first + c * hops + h; };
  for (int c = 0; c < chunks; ++c) {
    for (int h = 0; h < hops; ++h) {
      std::vector<int> deps;
      if (h > 0) deps.push_back(id(c, h - 1));
      // Only the first chunk pays the step latency: later chunks' synchronisation overlaps
      // the transfer of the chunk ahead (NCCL keeps NCCL_STEPS slots in flight), and each
      // follows the chunk ahead on its hop without waiting for it to arrive.
      const int f = b->Add(path[h], path[h + 1], bytes / chunks, std::move(deps), c == 0 ? 1 : 0);
      if (c > 0) b->SetFollows(f, id(c - 1, h));
    }
  }
}

void LowerRing(const LowerArgs& a, FlowBuilder* b) {
  const int n = a.n();
  const int channels = std::max(1, a.channels);
  const double part = a.c.bytes / channels;
  const bool ring_phase = a.c.kind == CollectiveKind::kAllReduce ||
                          a.c.kind == CollectiveKind::kReduceScatter ||
                          a.c.kind == CollectiveKind::kAllGather;
  if (ring_phase) {
    const size_t steps = a.c.kind == CollectiveKind::kAllReduce ? 2 * (n - 1) : n - 1;
    b->Reserve(static_cast<size_t>(channels) * n * (a.stream() ? 1 : steps));
  }
  for (int ch = 0; ch < channels; ++ch) {
    const std::vector<int> ring = ChannelRing(a.view, ch, channels);
    const int root_pos =
        static_cast<int>(std::find(ring.begin(), ring.end(), a.root) - ring.begin());
    switch (a.c.kind) {
      case CollectiveKind::kAllReduce:
        RingPhase(ring, 2 * (n - 1), part / n, a.stream(), {}, b, nullptr);
        break;
      case CollectiveKind::kReduceScatter:
      case CollectiveKind::kAllGather:
        RingPhase(ring, n - 1, part / n, a.stream(), {}, b, nullptr);
        break;
      case CollectiveKind::kBroadcast:  // root first, then around the ring
        ChainPipeline(Rotate(ring, root_pos), part, a.stream(), b);
        break;
      case CollectiveKind::kReduce:  // from the root's successor around to the root
        ChainPipeline(Rotate(ring, root_pos + 1), part, a.stream(), b);
        break;
      default:
        throw Error("ring has no lowering for " + std::string(ToString(a.c.kind)));
    }
  }
}

namespace {

// What C channels of a ring or chain move out of each GPU inside a server: one intra link
// shared by all, or along NVLink cycles min(C, 2 x cycles) NVLinks (ChannelRing), the busiest
// carrying ceil(C / lanes) channels.
double RingIntraBps(const AlphaBeta& m, int channels) {
  const int lanes = std::min(channels, 2 * m.nvlink_cycles);
  if (lanes <= 1) return m.intra_Bps;
  return m.intra_Bps * channels / ((channels + lanes - 1) / lanes);
}

// Ring steps: an edge runs up to kRingSlots steps ahead, so the latency is that of the hops a
// piece of data crosses (NCCL's model: steps - inter_steps intra-server hops), and the time on
// the wire that of the bottleneck: C channels share each GPU's intra link (or, along NVLink
// cycles, spread over 2 x cycles NVLinks out of each GPU, the busiest carrying ceil(C / lanes))
// and use up to C NICs, each channel's flow at most the protocol's rate per channel.
double RingSeconds(const AlphaBeta& m, int steps, double step_bytes, int channels) {
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
double PipelineSeconds(const AlphaBeta& m, const PipelineHop& intra, const PipelineHop& inter,
                       int chunks) {
  const double t =
      intra.hops * (m.intra_step_s + intra.fill_s) + inter.hops * (m.inter_step_s + inter.fill_s);
  double slowest = intra.hops > 0 ? intra.period_s : 0;
  if (inter.hops > 0) slowest = std::max(slowest, inter.period_s);
  return t + (chunks - 1) * slowest;
}

double PredictRing(const PredictArgs& a) {
  const AlphaBeta& m = a.m;
  const int n = m.n, s = m.servers, C = a.channels;
  const double S = a.wire_bytes();
  const CollectiveKind kind = a.c.kind;
  if (kind == CollectiveKind::kAllReduce) return m.base_s + RingSeconds(m, 2 * (n - 1), S / n, C);
  if (kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kAllGather) {
    return m.base_s + RingSeconds(m, n - 1, S / n, C);
  }
  // Chain broadcast/reduce: C chains share each intra link, and spread over the NICs.
  const int chunks = PipelineChunks(a.c.bytes / C, n - 1);
  const double chunk = S / C / chunks;
  const PipelineHop intra{n - s, chunk / std::min(m.intra_Bps, m.flow_intra_Bps),
                          chunk * C / std::min(RingIntraBps(m, C), C * m.flow_intra_Bps)};
  const PipelineHop inter{
      s - 1, chunk / std::min(m.inter_Bps, m.flow_inter_Bps),
      chunk * C / std::min(m.inter_Bps * std::min(C, m.nics), C * m.flow_inter_Bps)};
  return m.base_s + PipelineSeconds(m, intra, inter, chunks);
}

}  // namespace

// NCCL's ring: auto may pick it, on as many channels as the tuner gives it.
const CollectiveAlgorithm collective_algorithms::ring{
    NcclAlgorithm::kRing,  // nccl
    true,                  // uses_channels
    true,                  // chosen_by_auto
    nullptr,               // auto_fits
    true,                  // neighbour_steps
    LowerRing,             // lower
    PredictRing,           // predict
};

}  // namespace stratasim::sim
