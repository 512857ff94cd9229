// DAPPLE's planner (dapple.h).
#include "strategies/planners/dapple.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/error.h"
#include "strategies/parallel_layout.h"
#include "strategies/planners/link_costs.h"

namespace stratasim::planners {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The GPU kinds of a set of ranks, each once.
std::vector<int> KindsOf(const ClusterView& c, const std::vector<int>& gpus) {
  std::vector<int> kinds;
  for (int r : gpus) kinds.push_back(c.devices[r].kind);
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  return kinds;
}

// Forward + backward seconds of blocks [first, end) on the slowest kind of `kinds`.
double StageSeconds(const std::vector<std::vector<double>>& prefix, const std::vector<int>& kinds,
                    int first, int end) {
  double t = 0;
  for (int k : kinds) t = std::max(t, prefix[k][end] - prefix[k][first]);
  return t;
}

// Per GPU kind, prefix sums of the bytes a stage holds without recomputation: model states, and
// activations per micro-batch in flight; the memory of a stage is then O(1) to check.
struct MemoryPrefix {
  std::vector<std::vector<double>> states, activations;  // [kind][block + 1]

  explicit MemoryPrefix(const CostProfile& p) {
    for (const std::vector<BlockCost>& costs : p.costs) {
      std::vector<double> st(costs.size() + 1, 0), act(costs.size() + 1, 0);
      for (size_t i = 0; i < costs.size(); ++i) {
        st[i + 1] = st[i] + costs[i].params * p.state_bytes_per_param;
        act[i + 1] = act[i] + costs[i].activation_bytes;
      }
      states.push_back(std::move(st));
      activations.push_back(std::move(act));
    }
  }
  // StageMemoryBytes(p, kind, first, end, in_flight) without recomputation.
  double Bytes(int kind, int first, int end, int in_flight) const {
    return states[kind][end] - states[kind][first] +
           in_flight * (activations[kind][end] - activations[kind][first]);
  }
};

// Each kind among `gpus` with the least memory a plan may fill on it.
std::vector<std::pair<int, double>> Capacities(const ClusterView& c, const std::vector<int>& gpus,
                                               double fraction) {
  std::vector<std::pair<int, double>> out;
  for (int r : gpus) {
    const ClusterView::Device& dev = c.devices[r];
    auto it =
        std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == dev.kind; });
    if (it == out.end()) {
      out.emplace_back(dev.kind, fraction * dev.memory_bytes);
    } else {
      it->second = std::min(it->second, fraction * dev.memory_bytes);
    }
  }
  return out;
}

bool Fits(const MemoryPrefix& mem, const std::vector<std::pair<int, double>>& capacities, int first,
          int end, int in_flight) {
  for (const auto& [kind, capacity] : capacities) {
    if (mem.Bytes(kind, first, end, in_flight) > capacity) return false;
  }
  return true;
}

// The transfers between stage `from` and stage `to`: the same replica's, lane index by lane index.
TransferCost CutCost(const ClusterView& c, const std::vector<int>& from,
                     const std::vector<int>& to) {
  std::vector<std::pair<int, int>> pairs;
  for (size_t k = 0; k < from.size(); ++k) pairs.emplace_back(from[k], to[k]);
  return TransferCost(c, pairs);
}

// Seconds for one micro-batch's activation and its gradient across the cut after block `last`.
double CutSeconds(const CostProfile& p, const TransferCost& cost, int sender_kind, int last) {
  return 2 * cost.Seconds(p.costs[sender_kind][last].output_bytes);
}

// A stage's data-parallel groups: one per tensor index over the stage's replicas.
std::vector<std::vector<int>> DataGroups(const std::vector<int>& gpus, int tensor) {
  const int replicas = static_cast<int>(gpus.size()) / tensor;
  std::vector<std::vector<int>> groups(tensor);
  for (int r = 0; r < replicas; ++r) {
    for (int x = 0; x < tensor; ++x) groups[x].push_back(gpus[r * tensor + x]);
  }
  return groups;
}

// Stage s's gradient all-reduce over its data-parallel groups.
double StageAllReduce(const CostProfile& p, const ClusterView& c, const std::vector<int>& gpus,
                      int tensor, int first, int end, double grad_bytes_per_param) {
  if (static_cast<int>(gpus.size()) / tensor < 2) return 0;
  double params = 0;
  const std::vector<BlockCost>& costs = p.costs[c.devices[gpus.front()].kind];
  for (int i = first; i < end; ++i) params += costs[i].params;
  return AllReduceSeconds(c, DataGroups(gpus, tensor), params * grad_bytes_per_param);
}

struct Candidate {
  double latency = kInf;
  double block = 0;  // beta
  std::vector<int> bounds;
  std::vector<std::vector<int>> gpus;
  std::vector<DapplePolicy> policies;
  std::vector<double> stage_seconds;
  int stages = 0, data = 0, micro_batches = 0;
};

// What the price of a placement depends on, stage by stage: its GPU kinds, their capacities,
// its all-reduce (seconds at 0 bytes and per byte) and the transfers to the next stage. Placements
// with the same price give the same plan, so only the first is planned.
struct Priced {
  std::vector<std::vector<int>> kinds;
  std::vector<std::vector<std::pair<int, double>>> capacities;
  std::vector<std::pair<double, double>> all_reduce;
  std::vector<TransferCost> cuts;  // cuts[s]: from stage s - 1 to stage s (cuts[0] unused)
  std::vector<int> sender_kind;    // the kind of stage s's first GPU

  Priced(const ClusterView& c, const std::vector<std::vector<int>>& gpus, int tensor,
         double fraction) {
    const int S = static_cast<int>(gpus.size());
    cuts.resize(S);
    for (int s = 0; s < S; ++s) {
      kinds.push_back(KindsOf(c, gpus[s]));
      capacities.push_back(Capacities(c, gpus[s], fraction));
      sender_kind.push_back(c.devices[gpus[s].front()].kind);
      if (s > 0) cuts[s] = CutCost(c, gpus[s - 1], gpus[s]);
      const std::vector<std::vector<int>> groups = DataGroups(gpus[s], tensor);
      const double fixed = AllReduceSeconds(c, groups, 0);
      all_reduce.emplace_back(fixed, groups.front().size() < 2 ? 0 : 1 / AllReduceBps(c, groups));
    }
  }
  bool operator<(const Priced& o) const {
    return std::tie(kinds, capacities, all_reduce, cuts, sender_kind) <
           std::tie(o.kinds, o.capacities, o.all_reduce, o.cuts, o.sender_kind);
  }
};

// DAPPLE's dynamic programme over the blocks for one placement: the partition with the smallest
// pipeline block (largest stage time or cut transfer), each stage fitting in memory with its
// S - s micro-batches in flight. Empty bounds when none fits.
std::vector<int> PartitionFor(const CostProfile& p, const Priced& priced,
                              const std::vector<std::vector<double>>& prefix,
                              const MemoryPrefix& mem, int micro_batches) {
  const int S = static_cast<int>(priced.kinds.size());
  const int B = p.Blocks();
  const auto& kinds = priced.kinds;
  const auto& capacities = priced.capacities;
  // cut[s][i]: the transfer between stages s - 1 and s when stage s starts at block i.
  std::vector<std::vector<double>> cut(S, std::vector<double>(B + 1, 0));
  for (int s = 1; s < S; ++s) {
    for (int i = 1; i < B; ++i) {
      cut[s][i] = CutSeconds(p, priced.cuts[s], priced.sender_kind[s - 1], i - 1);
    }
  }
  // dp[s][j]: the best pipeline block of blocks [0, j) on stages [0, s).
  std::vector<std::vector<double>> dp(S + 1, std::vector<double>(B + 1, kInf));
  std::vector<std::vector<int>> from(S + 1, std::vector<int>(B + 1, -1));
  dp[0][0] = 0;
  for (int s = 1; s <= S; ++s) {
    const int in_flight = std::min(S - (s - 1), micro_batches);
    for (int j = s; j <= B - (S - s); ++j) {
      for (int i = s - 1; i < j; ++i) {
        if (dp[s - 1][i] == kInf) continue;
        double v = std::max(
            {dp[s - 1][i], StageSeconds(prefix, kinds[s - 1], i, j), s > 1 ? cut[s - 1][i] : 0.0});
        if (v >= dp[s][j]) continue;
        if (!Fits(mem, capacities[s - 1], i, j, in_flight)) continue;
        dp[s][j] = v;
        from[s][j] = i;
      }
    }
  }
  if (dp[S][B] == kInf) return {};
  std::vector<int> bounds(S + 1);
  bounds[S] = B;
  for (int s = S; s > 0; --s) bounds[s - 1] = from[s][bounds[s]];
  return bounds;
}

struct Placement {
  std::vector<std::vector<int>> gpus;
  std::vector<DapplePolicy> policies;
};

// Every distinct placement of S stages of `units` tensor groups each that a sequence of policies
// gives, at most `limit` (`truncated` says whether some were left out).
std::vector<Placement> Placements(const ClusterView& c, int S, int units, int unit, int limit,
                                  bool& truncated) {
  struct Partial {
    std::vector<bool> occupied;
    Placement placement;
  };
  std::vector<Partial> frontier(1);
  frontier[0].occupied.assign(c.Gpus(), false);
  for (int s = 0; s < S; ++s) {
    std::vector<Partial> next;
    std::set<std::vector<std::vector<int>>> seen;
    for (const Partial& part : frontier) {
      for (DapplePolicy policy :
           {DapplePolicy::kFreshFirst, DapplePolicy::kAppendFirst, DapplePolicy::kScatterFirst}) {
        Partial grown = part;
        std::vector<int> gpus = DapplePlace(c, grown.occupied, units, unit, policy);
        if (gpus.empty()) continue;
        grown.placement.gpus.push_back(gpus);
        grown.placement.policies.push_back(policy);
        if (!seen.insert(grown.placement.gpus).second) continue;
        if (static_cast<int>(next.size()) == limit) {
          truncated = true;
          continue;
        }
        next.push_back(std::move(grown));
      }
    }
    frontier = std::move(next);
  }
  std::vector<Placement> out;
  for (Partial& part : frontier) out.push_back(std::move(part.placement));
  return out;
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? sep : "") + parts[i];
  return text;
}

std::string Ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
  return buf;
}

}  // namespace

std::vector<std::vector<int>> OrderLayout(int stages, int tensor, int data,
                                          const std::string& order) {
  ParallelLayout layout;
  layout.tensor = tensor;
  layout.stages = stages;
  layout.data = data;
  layout.order = order;
  std::vector<std::vector<int>> gpus(stages);
  for (int s = 0; s < stages; ++s) {
    for (int r = 0; r < data; ++r) {
      for (int x = 0; x < tensor; ++x) gpus[s].push_back(layout.Rank(r, s, x));
    }
  }
  return gpus;
}

std::string TakeRankOrder(PlannedPipeline& plan) {
  if (plan.ranks.empty()) return "tpd";
  for (const std::string& order : ParallelLayout::Orders()) {
    const std::vector<std::vector<int>> gpus =
        OrderLayout(plan.stages, plan.tensor, plan.data, order);
    bool same = true;
    for (int r = 0; same && r < plan.data; ++r) {
      for (int st = 0; same && st < plan.stages; ++st) {
        for (int x = 0; same && x < plan.tensor; ++x) {
          same =
              plan.ranks[(r * plan.stages + st) * plan.tensor + x] == gpus[st][r * plan.tensor + x];
        }
      }
    }
    if (same) {
      plan.ranks.clear();
      return order;
    }
  }
  return "tpd";
}

const char* DapplePolicyName(DapplePolicy p) {
  switch (p) {
    case DapplePolicy::kFreshFirst:
      return "fresh-first";
    case DapplePolicy::kAppendFirst:
      return "append-first";
    case DapplePolicy::kScatterFirst:
      return "scatter-first";
  }
  return "?";
}

std::vector<int> DapplePlace(const ClusterView& c, std::vector<bool>& occupied, int units, int unit,
                             DapplePolicy policy) {
  // Free units (tensor groups of `unit` consecutive ranks) per server, lowest first, and
  // whether any of the server's GPUs is taken.
  std::vector<std::vector<int>> free(c.Servers());
  std::vector<bool> used(c.Servers(), false);
  for (int u = 0; u * unit < c.Gpus(); ++u) {
    bool all_free = true;
    for (int r = u * unit; r < (u + 1) * unit; ++r) {
      if (occupied[r]) {
        all_free = false;
        used[c.devices[r].server] = true;
      }
    }
    if (all_free) free[c.devices[u * unit].server].push_back(u);
  }
  std::vector<int> taken;
  if (policy == DapplePolicy::kScatterFirst) {
    // One unit from each server with free ones in turn.
    std::vector<size_t> next(c.Servers(), 0);
    for (bool progress = true; progress && static_cast<int>(taken.size()) < units;) {
      progress = false;
      for (int sv = 0; sv < c.Servers() && static_cast<int>(taken.size()) < units; ++sv) {
        if (next[sv] < free[sv].size()) {
          taken.push_back(free[sv][next[sv]++]);
          progress = true;
        }
      }
    }
  } else {
    // The preferred servers (fresh ones, or those in use) in order, then the others.
    const bool fresh = policy == DapplePolicy::kFreshFirst;
    std::vector<int> order;
    for (int sv = 0; sv < c.Servers(); ++sv) {
      if (used[sv] != fresh) order.push_back(sv);
    }
    for (int sv = 0; sv < c.Servers(); ++sv) {
      if (used[sv] == fresh) order.push_back(sv);
    }
    for (int sv : order) {
      for (int u : free[sv]) {
        if (static_cast<int>(taken.size()) < units) taken.push_back(u);
      }
    }
  }
  if (static_cast<int>(taken.size()) < units) return {};
  std::vector<int> gpus;
  for (int u : taken) {
    for (int r = u * unit; r < (u + 1) * unit; ++r) {
      occupied[r] = true;
      gpus.push_back(r);
    }
  }
  return gpus;
}

double DappleLatency(const CostProfile& p, const ClusterView& c, const std::vector<int>& bounds,
                     const std::vector<std::vector<int>>& gpus, int tensor, int micro_batches,
                     double grad_bytes_per_param, std::vector<double>* stage_seconds) {
  const int S = static_cast<int>(gpus.size());
  std::vector<std::vector<double>> prefix;
  for (const std::vector<BlockCost>& costs : p.costs) prefix.push_back(PrefixTimes(costs));
  std::vector<double> T(S);
  double beta = 0, sum_t = 0, sum_cut = 0;
  for (int s = 0; s < S; ++s) {
    T[s] = StageSeconds(prefix, KindsOf(c, gpus[s]), bounds[s], bounds[s + 1]);
    beta = std::max(beta, T[s]);
    sum_t += T[s];
    if (s > 0) {
      const double cut = CutSeconds(p, CutCost(c, gpus[s - 1], gpus[s]),
                                    c.devices[gpus[s - 1].front()].kind, bounds[s] - 1);
      beta = std::max(beta, cut);
      sum_cut += cut;
    }
  }
  // Stage s's backwards end about s pipeline blocks before stage 0's, so that much of its
  // gradient all-reduce hides behind the drain.
  double exposed = 0;
  for (int s = 0; s < S; ++s) {
    const double ar =
        StageAllReduce(p, c, gpus[s], tensor, bounds[s], bounds[s + 1], grad_bytes_per_param);
    exposed = std::max(exposed, ar - s * beta);
  }
  if (stage_seconds) *stage_seconds = T;
  return beta * (micro_batches - 1) + sum_t + sum_cut + exposed;
}

PlannedPipeline PlanDapple(const PlannerInput& in, const DappleSettings& settings) {
  const auto start = std::chrono::steady_clock::now();
  const CostProfile& p = in.profile;
  const ClusterView& c = in.cluster;
  const int G = c.Gpus(), B = p.Blocks(), t = in.tensor;
  const int total_micro_batches = in.micro_batches * in.data;
  std::vector<std::vector<double>> prefix;
  for (const std::vector<BlockCost>& costs : p.costs) prefix.push_back(PrefixTimes(costs));
  const MemoryPrefix mem(p);

  Candidate best;
  int tried = 0, unfit = 0;
  std::vector<std::string> truncated_at;
  for (int S = 2; S <= B; ++S) {
    if (settings.choose_stages ? G % (S * t) != 0 : S != in.stages) continue;
    const int d = G / (S * t);
    if (total_micro_batches % d != 0) continue;
    const int M = total_micro_batches / d;
    bool truncated = false;
    // The rank orders' layouts by price: a placement priced as one of them is planned as it.
    std::map<Priced, std::vector<std::vector<int>>> orders;
    for (const std::string& order : ParallelLayout::Orders()) {
      std::vector<std::vector<int>> gpus = OrderLayout(S, t, d, order);
      orders.emplace(Priced(c, gpus, t, in.memory_fraction), std::move(gpus));
    }
    std::set<Priced> priced;
    for (Placement pl : Placements(c, S, d, t, settings.max_placements, truncated)) {
      auto [it, added] = priced.insert(Priced(c, pl.gpus, t, in.memory_fraction));
      if (!added) continue;  // priced as a placement already planned
      const auto same = orders.find(*it);
      if (same != orders.end()) {
        pl.gpus = same->second;
      }
      ++tried;
      std::vector<int> bounds = PartitionFor(p, *it, prefix, mem, M);
      if (bounds.empty()) {
        ++unfit;
        continue;
      }
      std::vector<double> T;
      const double L =
          DappleLatency(p, c, bounds, pl.gpus, t, M, settings.grad_bytes_per_param, &T);
      if (L >= best.latency) continue;
      best.latency = L;
      best.bounds = bounds;
      best.gpus = pl.gpus;
      best.policies = pl.policies;
      best.stage_seconds = T;
      best.stages = S;
      best.data = d;
      best.micro_batches = M;
    }
    if (truncated) truncated_at.push_back(std::to_string(S));
  }
  if (best.bounds.empty()) {
    throw Error("dapple: no plan fits: " + std::to_string(tried) +
                " candidates (stage counts x placements) tried, " + std::to_string(unfit) +
                " of them out of memory");
  }

  PlannedPipeline out;
  out.stages = best.stages;
  out.tensor = t;
  out.data = best.data;
  out.bounds = best.bounds;
  out.ranks.resize(static_cast<size_t>(G));
  for (int r = 0; r < best.data; ++r) {
    for (int s = 0; s < best.stages; ++s) {
      for (int x = 0; x < t; ++x)
        out.ranks[(r * best.stages + s) * t + x] = best.gpus[s][r * t + x];
    }
  }
  // DAPPLE's early backward: stage i starts its backwards after S - i forwards and keeps at
  // most S - i micro-batches in flight. That is exactly 1F1B's (PipeDream-Flush's) order, which
  // the pipeline lowering already has.
  out.schedule = "1f1b";
  out.micro_batches = best.micro_batches;
  out.stage_seconds = best.stage_seconds;
  out.predicted_seconds = best.latency;

  std::vector<std::string> policies;
  for (DapplePolicy pol : best.policies) policies.push_back(DapplePolicyName(pol));
  out.notes.push_back("dapple: " + std::to_string(best.stages) + " stages x " +
                      std::to_string(best.data) + " replicas" +
                      (t > 1 ? " x tensor " + std::to_string(t) : "") + ", partition " +
                      PartitionText(best.bounds) + " blocks, placement " + Join(policies, ",") +
                      ", predicted iteration " + Ms(best.latency) +
                      " (DAPPLE's latency estimate with the cluster's bandwidths)");
  out.notes.push_back("dapple: " + std::to_string(tried) + " candidates scored, " +
                      std::to_string(unfit) + " out of memory");
  if (!truncated_at.empty()) {
    out.notes.push_back("dapple: placements cut at " + std::to_string(settings.max_placements) +
                        " for stage counts " + Join(truncated_at, ","));
  }
  out.planning_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace stratasim::planners
