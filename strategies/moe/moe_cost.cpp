#include "strategies/moe/moe_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stratasim {

MoeCostModel MakeMoeCostModel(const Scenario& s, const MoeSetup& st) {
  MoeCostModel m;
  const GpuSpec& gpu = s.cluster.GpuOfRank(0);
  const double flops = gpu.Peak(st.dtype) * s.simulation.compute_efficiency;
  // A token through one expert: 2 FLOPs per weight, 2 (GELU) or 3 (SwiGLU) matrices of h x f,
  // at the FP8 peak when the expert GEMMs run in FP8.
  const double expert_flops =
      st.fp8 ? gpu.Peak(DType::kFP8) * s.simulation.compute_efficiency : flops;
  m.token_s = (st.swiglu ? 6 : 4) * st.hidden * st.ffn_hidden / expert_flops;
  double bw = std::numeric_limits<double>::infinity();
  for (const ServerGroup& g : s.cluster.groups) {
    double link = 0;
    if (s.cluster.NumServers() > 1) {
      link = g.nics.link.bandwidth_Bps * g.nics.count / g.gpus_per_server;
    } else if (g.nvswitch) {
      link = g.nvswitch->link.bandwidth_Bps;
    } else if (g.pcie) {
      link = g.pcie->link.bandwidth_Bps;
    } else if (g.nvlink) {
      link = g.nvlink->link.bandwidth_Bps;
    }
    if (link > 0) bw = std::min(bw, link);
  }
  m.net_Bps = std::isfinite(bw) ? bw : 1e9;
  m.bytes_per_token = st.bytes_per_token;
  m.expert_bytes = st.expert_params * BytesPerElement(st.dtype);
  double fwd = 0, bwd = 0;
  for (const MoeLayerParts& p : st.parts) {
    for (const OpCost& op : p.pre) {
      fwd += op.forward.flops;
      bwd += op.BackwardFlops();
    }
  }
  const double layers = std::max<size_t>(st.parts.size(), 1);
  m.dense_fwd_s = fwd / layers / flops;
  m.dense_bwd_s = bwd / layers / flops;
  return m;
}

double AllToAllSeconds(const LayerDecision& d, const MoeCostModel& m) {
  const int n = d.ranks;
  double worst = 0;
  for (int r = 0; r < n; ++r) {
    double out = 0, in = 0;
    for (int o = 0; o < n; ++o) {
      if (o == r) continue;
      out += d.a2a_tokens[static_cast<size_t>(r) * n + o];
      in += d.a2a_tokens[static_cast<size_t>(o) * n + r];
    }
    worst = std::max({worst, out, in});
  }
  return worst * m.bytes_per_token / m.net_Bps;
}

double ExpertSeconds(const LayerDecision& d, const MoeCostModel& m) {
  const std::vector<double> c = d.ComputedTokens();
  return *std::max_element(c.begin(), c.end()) * m.token_s;
}

double ReplicaTransferSeconds(const LayerDecision& d, int ranks, const MoeCostModel& m) {
  double seconds = 0;
  for (const Replica& r : d.replicas) {
    seconds += (r.holders.size() + 1.0) / ranks * m.expert_bytes / m.net_Bps;
  }
  return seconds;
}

std::vector<double> ExpertLoads(const TokenMatrix& predicted, double* total) {
  std::vector<double> load(predicted.empty() ? 0 : predicted.front().size(), 0);
  *total = 0;
  for (const auto& row : predicted) {
    for (size_t x = 0; x < load.size(); ++x) {
      load[x] += row[x];
      *total += row[x];
    }
  }
  return load;
}

}  // namespace stratasim
