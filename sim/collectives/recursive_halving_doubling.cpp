#include "sim/collectives/recursive_halving_doubling.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "sim/collectives/registry.h"

namespace stratasim::sim {

void LowerRecursiveHalvingDoubling(const LowerArgs& a, FlowBuilder* b) {
  if (a.c.kind != CollectiveKind::kAllReduce) {
    throw Error("recursive_halving_doubling has no lowering for " +
                std::string(ToString(a.c.kind)));
  }
  const int n = a.n();
  const double bytes = a.c.bytes;
  if (n < 2) return;
  int p = 1;
  while (p * 2 <= n) p *= 2;
  const int r = n - p;
  // The flows each member must wait for before its next step: its last send and receive.
  MemberFlows last(n);
  auto exchange = [&](int x, int y, double size) {
    const std::vector<int> deps = Union(last, {x, y});
    const int xy = b->Add(x, y, size, deps);
    const int yx = b->Add(y, x, size, deps);
    last[x] = last[y] = {xy, yx};
  };
  // Fold: member 2i hands its buffer to 2i+1.
  for (int i = 0; i < r; ++i) last[2 * i + 1] = last[2 * i] = {b->Add(2 * i, 2 * i + 1, bytes, {})};
  // Active member v (0..p-1) is member 2v+1 among the folded pairs, else v + r.
  auto member = [r](int v) { return v < r ? 2 * v + 1 : v + r; };
  std::vector<int> distances;
  for (int d = p / 2; d >= 1; d /= 2) distances.push_back(d);
  double size = bytes;
  for (int d : distances) {  // halving: exchange half of what is left, with partner v ^ d
    size /= 2;
    for (int v = 0; v < p; ++v) {
      if ((v ^ d) > v) exchange(member(v), member(v ^ d), size);
    }
  }
  for (auto it = distances.rbegin(); it != distances.rend(); ++it) {  // doubling: mirror image
    for (int v = 0; v < p; ++v) {
      if ((v ^ *it) > v) exchange(member(v), member(v ^ *it), size);
    }
    size *= 2;
  }
  // Unfold: 2i+1 returns the result to 2i.
  for (int i = 0; i < r; ++i) b->Add(2 * i + 1, 2 * i, bytes, last[2 * i + 1]);
}

namespace {

double PredictRecursiveHalvingDoubling(const PredictArgs& a) {
  const AlphaBeta& m = a.m;
  const int n = m.n, k = m.per_server;
  const double S = a.wire_bytes();
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

}  // namespace

// MPI's algorithm, run only when named: `validate` compares with real NCCL, which does not run
// it, and on a non-blocking NVSwitch the alpha-beta model would prefer it to the ring (same
// bytes, fewer steps).
const CollectiveAlgorithm collective_algorithms::recursive_halving_doubling{
    NcclAlgorithm::kRing,             // nccl
    false,                            // uses_channels
    false,                            // chosen_by_auto
    nullptr,                          // auto_fits
    false,                            // neighbour_steps
    LowerRecursiveHalvingDoubling,    // lower
    PredictRecursiveHalvingDoubling,  // predict
};

}  // namespace stratasim::sim
