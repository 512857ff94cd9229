// HPH's topology designer (hph_topology.h).
#include "strategies/planners/hph_topology.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "core/error.h"
#include "strategies/parallel_layout.h"

namespace stratasim::planners {
namespace {

// Forward + backward seconds of the whole model on each kind: the larger, the slower the kind.
std::vector<double> KindSeconds(const CostProfile& p) {
  std::vector<double> t(p.kinds.size(), 0);
  for (size_t k = 0; k < p.kinds.size(); ++k) {
    t[k] = PrefixTimes(p.costs[k]).back();
  }
  return t;
}

// Costs a layout whose ranks are set: each stage's slowest kind and smallest memory.
StageLayout Costed(const PlannerInput& in, std::vector<int> ranks, bool default_order) {
  const std::vector<double> kind_seconds = KindSeconds(in.profile);
  StageLayout l;
  l.ranks = std::move(ranks);
  l.default_order = default_order;
  l.stage_kind.assign(in.stages, -1);
  l.stage_budget.assign(in.stages, 0);
  for (int r = 0; r < in.data; ++r) {
    for (int st = 0; st < in.stages; ++st) {
      for (int x = 0; x < in.tensor; ++x) {
        const ClusterView::Device& d =
            in.cluster.devices[l.ranks[(r * in.stages + st) * in.tensor + x]];
        const double budget = d.memory_bytes * in.memory_fraction;
        if (l.stage_kind[st] < 0) {
          l.stage_kind[st] = d.kind;
          l.stage_budget[st] = budget;
          continue;
        }
        if (kind_seconds[d.kind] > kind_seconds[l.stage_kind[st]]) l.stage_kind[st] = d.kind;
        l.stage_budget[st] = std::min(l.stage_budget[st], budget);
      }
    }
  }
  return l;
}

// The layout of GPUs listed in `order`: consecutive stages of tensor x data GPUs.
std::vector<int> CutIntoStages(const PlannerInput& in, const std::vector<int>& order) {
  const int per_stage = in.tensor * in.data;
  std::vector<int> ranks(order.size());
  for (int st = 0; st < in.stages; ++st) {
    for (int r = 0; r < in.data; ++r) {
      for (int x = 0; x < in.tensor; ++x) {
        ranks[(r * in.stages + st) * in.tensor + x] = order[st * per_stage + r * in.tensor + x];
      }
    }
  }
  return ranks;
}

// The kind orders the designer tries.
std::vector<std::vector<int>> KindOrders(const PlannerInput& in) {
  std::vector<int> kinds;
  for (const ClusterView::Device& d : in.cluster.devices) kinds.push_back(d.kind);
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  std::vector<std::vector<int>> orders;
  if (kinds.size() <= 4) {
    do {
      orders.push_back(kinds);
    } while (std::next_permutation(kinds.begin(), kinds.end()));
    return orders;
  }
  const std::vector<double> seconds = KindSeconds(in.profile);
  std::stable_sort(kinds.begin(), kinds.end(),
                   [&](int a, int b) { return seconds[a] < seconds[b]; });
  orders.push_back(kinds);
  std::reverse(kinds.begin(), kinds.end());
  orders.push_back(kinds);
  return orders;
}

}  // namespace

void CheckHphInput(const PlannerInput& in) {
  CheckPlannerInput(in);
  // HPH's designer cuts every GPU of the cluster into stages.
  if (in.stages * in.tensor * in.data != in.cluster.Gpus()) {
    throw Error("planner input: stages x tensor x data = " +
                std::to_string(in.stages * in.tensor * in.data) + " but the cluster has " +
                std::to_string(in.cluster.Gpus()) + " GPUs");
  }
}

namespace {

std::vector<int> OrderRanks(const PlannerInput& in, const std::string& order) {
  ParallelLayout layout;
  layout.tensor = in.tensor;
  layout.stages = in.stages;
  layout.data = in.data;
  layout.order = order;
  std::vector<int> ranks;
  for (int r = 0; r < in.data; ++r) {
    for (int st = 0; st < in.stages; ++st) {
      for (int x = 0; x < in.tensor; ++x) ranks.push_back(layout.Rank(r, st, x));
    }
  }
  return ranks;
}

}  // namespace

StageLayout DefaultLayout(const PlannerInput& in, const std::string& order) {
  CheckHphInput(in);
  return Costed(in, OrderRanks(in, order), true);
}

std::string RankOrderOf(const PlannerInput& in, const std::vector<int>& ranks) {
  for (const std::string& order : ParallelLayout::Orders()) {
    if (OrderRanks(in, order) == ranks) return order;
  }
  return "";
}

std::vector<StageLayout> DesignLayouts(const PlannerInput& in) {
  CheckHphInput(in);
  std::vector<StageLayout> layouts;
  for (const std::vector<int>& kind_order : KindOrders(in)) {
    std::vector<int> position(in.profile.kinds.size(), 0);
    for (size_t i = 0; i < kind_order.size(); ++i) position[kind_order[i]] = static_cast<int>(i);
    std::vector<int> order(in.cluster.Gpus());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const ClusterView::Device& da = in.cluster.devices[a];
      const ClusterView::Device& db = in.cluster.devices[b];
      return std::make_tuple(position[da.kind], da.server, da.pcie_switch, a) <
             std::make_tuple(position[db.kind], db.server, db.pcie_switch, b);
    });
    layouts.push_back(Costed(in, CutIntoStages(in, order), false));
  }
  return layouts;
}

std::string StageKindsText(const CostProfile& profile, const std::vector<int>& stage_kind) {
  std::string text;
  for (size_t i = 0; i < stage_kind.size();) {
    size_t j = i;
    while (j < stage_kind.size() && stage_kind[j] == stage_kind[i]) ++j;
    if (!text.empty()) text += ", ";
    text += profile.kinds[stage_kind[i]] + " x" + std::to_string(j - i);
    i = j;
  }
  return text;
}

}  // namespace stratasim::planners
