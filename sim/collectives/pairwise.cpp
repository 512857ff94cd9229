#include "sim/collectives/pairwise.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "sim/collectives/direct.h"
#include "sim/collectives/registry.h"

namespace stratasim::sim {

void LowerPairwise(const LowerArgs& a, FlowBuilder* b) {
  const Collective& c = a.c;
  if (c.kind != CollectiveKind::kAllToAll && c.kind != CollectiveKind::kAllToAllV) {
    throw Error("pairwise has no lowering for " + std::string(ToString(c.kind)));
  }
  CheckAllToAllMatrix(c);
  const int n = a.n();
  std::vector<int> last_send(n, -1), last_recv(n, -1);
  for (int k = 1; k < n; ++k) {
    std::vector<int> sent(n, -1);
    for (int i = 0; i < n; ++i) {
      const int j = (i + k) % n;
      const double bytes = AllToAllBytes(c, i, j);
      if (bytes <= 0) continue;
      std::vector<int> deps;
      if (last_send[i] >= 0) deps.push_back(last_send[i]);
      if (last_recv[i] >= 0 && last_recv[i] != last_send[i]) deps.push_back(last_recv[i]);
      sent[i] = b->Add(i, j, bytes, std::move(deps));
    }
    // Update after the round, so round k depends on round k-1 only.
    for (int i = 0; i < n; ++i) {
      if (sent[i] < 0) continue;
      last_send[i] = sent[i];
      last_recv[(i + k) % n] = sent[i];
    }
  }
}

namespace {

double PredictPairwise(const PredictArgs& a) {
  const AlphaBeta& m = a.m;
  const int n = m.n;
  double t = m.base_s;
  for (int r = 1; r < n; ++r) {
    double round = 0;
    bool any = false;
    for (int i = 0; i < n; ++i) {
      const int j = (i + r) % n;
      const double b = AllToAllBytes(a.c, i, j) * m.wire;
      if (b <= 0) continue;
      any = true;
      const bool across = a.view.members[i].server != a.view.members[j].server;
      round =
          std::max(round, across ? m.inter_step_s + b / std::min(m.inter_gpu_Bps, m.flow_inter_Bps)
                                 : m.intra_step_s + b / std::min(m.intra_Bps, m.flow_intra_Bps));
    }
    if (any) t += round;
  }
  return t;
}

}  // namespace

// MPI's algorithm, run only when named (as recursive halving-doubling).
const CollectiveAlgorithm collective_algorithms::pairwise{
    NcclAlgorithm::kRing,  // nccl
    false,                 // uses_channels
    false,                 // chosen_by_auto
    nullptr,               // auto_fits
    false,                 // neighbour_steps
    LowerPairwise,         // lower
    PredictPairwise,       // predict
};

}  // namespace stratasim::sim
