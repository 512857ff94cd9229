#include "strategies/planners/oases_profile.h"

#include <algorithm>
#include <set>
#include <string>

#include "core/error.h"
#include "strategies/planners/link_costs.h"
#include "strategies/planners/profile.h"
#include "strategies/tensor/tp_layer.h"

namespace stratasim::planners {
namespace {

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool IsSubLayer(const std::string& name) {
  return EndsWith(name, ".attn") || EndsWith(name, ".mlp");
}

// The tensor groups of degree t over ranks 0 .. gpus - 1: t consecutive ranks each.
std::vector<std::vector<int>> TensorGroups(int gpus, int t) {
  std::vector<std::vector<int>> groups;
  for (int first = 0; first < gpus; first += t) {
    std::vector<int>& g = groups.emplace_back();
    for (int r = first; r < first + t; ++r) g.push_back(r);
  }
  return groups;
}

// The re-shard groups between degrees lo < hi: inside each group of hi ranks, the hi / lo ranks
// that hold the same shard index of their lo-groups.
std::vector<std::vector<int>> ReshardGroups(int gpus, int lo, int hi) {
  std::vector<std::vector<int>> groups;
  for (int first = 0; first < gpus; first += hi) {
    for (int j = 0; j < lo; ++j) {
      std::vector<int>& g = groups.emplace_back();
      for (int r = first + j; r < first + hi; r += lo) g.push_back(r);
    }
  }
  return groups;
}

void CheckRequest(const Scenario& s, const OasesProfileRequest& r) {
  const std::string at = "oases planner: ";
  if (r.gpus < 1 || r.gpus > s.cluster.NumGpus()) {
    throw Error(at + "the strategy's " + std::to_string(r.gpus) + " GPUs must be 1 to the " +
                std::to_string(s.cluster.NumGpus()) + " of the cluster");
  }
  if (r.degrees.empty()) throw Error(at + "no candidate tensor-parallel degree");
  if (r.group_samples.size() != r.degrees.size()) {
    throw Error(at + std::to_string(r.group_samples.size()) + " group sizes for " +
                std::to_string(r.degrees.size()) + " degrees");
  }
  for (size_t a = 0; a < r.degrees.size(); ++a) {
    const int t = r.degrees[a];
    if (t < 1 || r.gpus % t != 0 || (a > 0 && t <= r.degrees[a - 1])) {
      throw Error(at + "degree " + std::to_string(t) + ": the degrees must increase and divide " +
                  "the " + std::to_string(r.gpus) + " GPUs");
    }
    const int m = r.group_samples[a];
    if (m < 2 || m % 2 != 0) {
      throw Error(at + "a tensor group of degree " + std::to_string(t) + " processes " +
                  std::to_string(m) + " samples per micro-batch: Oases splits it into two " +
                  "equal sub-batches, so it must be even and >= 2");
    }
  }
}

// The larger of two costs, field by field (the slowest GPU kind).
void Slowest(OasesCost& into, const BlockCost& b) {
  into.forward_s = std::max(into.forward_s, b.forward_s);
  into.backward_s = std::max(into.backward_s, b.backward_s);
  into.recompute_s = std::max(into.recompute_s, b.recompute_s);
}

}  // namespace

std::vector<int> OasesCandidateDegrees(const Scenario& s, int gpus) {
  std::vector<int> degrees;
  for (int t = 1; t <= gpus; ++t) {
    bool fits = gpus % t == 0 && s.model.heads % t == 0 &&
                (s.model.kv_heads == 0 || s.model.kv_heads % t == 0);
    for (const ServerGroup& g : s.cluster.groups) fits = fits && g.gpus_per_server % t == 0;
    if (fits) degrees.push_back(t);
  }
  return degrees;
}

double OasesMemoryLimitBytes(const Scenario& s, int gpus) {
  const ClusterView view = ViewCluster(s, CostProfile{});
  double least = 0;
  for (int r = 0; r < std::min(gpus, view.Gpus()); ++r) {
    const double m = view.devices[r].memory_bytes;
    least = r == 0 ? m : std::min(least, m);
  }
  return kOasesMemoryFraction * least;
}

OasesProfile BuildOasesProfile(const Scenario& s, const OasesProfileRequest& r) {
  CheckRequest(s, r);
  OasesProfile p;
  p.degrees = r.degrees;
  const int k = static_cast<int>(r.degrees.size());
  ClusterView view;
  std::set<int> kinds;       // the kinds of the strategy's GPUs
  double element_bytes = 0;  // of an activation
  for (int a = 0; a < k; ++a) {
    const int t = r.degrees[a];
    const int sub_batch = r.group_samples[a] / 2;
    const Workload blocks = PlannerBlocks(s, t, /*sequence_parallel=*/false, sub_batch);
    // Degree 1 passed on: the blocks are sharded for t already, and ProfileBlocks then leaves
    // its own collectives out, which Oases overlaps and prices separately below.
    const CostProfile times = ProfileBlocks(s, blocks, /*tensor=*/1, false);
    if (a == 0) {
      view = ViewCluster(s, times);
      for (int rank = 0; rank < r.gpus; ++rank) kinds.insert(view.devices[rank].kind);
    }
    element_bytes = BytesPerElement(blocks.dtype);
    const double all_reduce_s = AllReduceSeconds(
        view, TensorGroups(r.gpus, t),
        static_cast<double>(sub_batch) * s.model.sequence * s.model.hidden * element_bytes);
    const double per_param = times.state_bytes_per_param;
    // The embedding's and head's memory goes to the first and the last sub-layer.
    double before = 0, after = 0;
    int sub_layer = 0;
    for (size_t j = 0; j < blocks.layers.size(); ++j) {
      const LayerCost& L = blocks.layers[j];
      const BlockCost& b0 = times.costs.front()[j];
      if (!IsSubLayer(L.name)) {
        (sub_layer == 0 ? before : after) += L.params * per_param + 2 * b0.activation_bytes;
        continue;
      }
      if (a == 0) {
        p.names.push_back(L.name);
        p.costs.emplace_back(k);
      } else if (sub_layer >= p.SubLayers() || p.names[sub_layer] != L.name) {
        throw Error("oases planner: the sub-layers at degree " + std::to_string(t) +
                    " differ from those at degree " + std::to_string(r.degrees[0]));
      }
      OasesCost& c = p.costs[sub_layer][a];
      for (int kind : kinds) Slowest(c, times.costs[kind][j]);
      int row = 0, column = 0;
      for (const OpCost& op : L.ops) row += IsRowParallel(op), column += IsColumnParallel(op);
      c.forward_comm_s = row * all_reduce_s;
      c.backward_comm_s = column * all_reduce_s;
      c.state_bytes = L.params * per_param;
      // Both sub-batches' activations. Communication-free recomputation keeps the sub-layer's
      // input and its post-all-reduce output (the next block's input) and recomputes the rest
      // in the backward, when both sub-batches' full activations are held again.
      if (r.recompute && b0.recomputable) {
        c.kept_bytes = 2 * (b0.checkpoint_bytes + b0.output_bytes);
        c.working_bytes = 2 * b0.activation_bytes;
      } else {
        c.recompute_s = 0;
        c.kept_bytes = 2 * b0.activation_bytes;
      }
      ++sub_layer;
    }
    if (sub_layer == 0) {
      throw Error("oases planner: the model has no transformer layer to split into sub-layers");
    }
    p.costs.front()[a].state_bytes += before;
    p.costs.back()[a].state_bytes += after;
  }
  // Re-shard tables: one ring all-gather of the b-group's whole micro-batch activation over the
  // hi / lo ranks of each re-shard group, half a ring all-reduce of the same size.
  const int n = p.SubLayers();
  p.reshard_s.assign(n - 1, std::vector<std::vector<double>>(k, std::vector<double>(k, 0)));
  for (int a = 0; a < k; ++a) {
    for (int b = a + 1; b < k; ++b) {
      const int lo = r.degrees[a], hi = r.degrees[b];
      const double bytes = static_cast<double>(r.group_samples[b]) * s.model.sequence *
                           s.model.hidden * element_bytes;
      const double gather_s = AllReduceSeconds(view, ReshardGroups(r.gpus, lo, hi), bytes) / 2;
      for (int i = 0; i + 1 < n; ++i) p.reshard_s[i][a][b] = p.reshard_s[i][b][a] = gather_s;
    }
  }
  CheckOasesProfile(p);
  return p;
}

}  // namespace stratasim::planners
