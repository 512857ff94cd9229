#include "sim/collectives/ring.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "sim/collectives/member_order.h"

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

}  // namespace stratasim::sim
