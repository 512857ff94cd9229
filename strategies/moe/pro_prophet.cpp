#include "strategies/moe/pro_prophet.h"

#include <algorithm>
#include <numeric>

#include "strategies/moe/ep_groups.h"
#include "strategies/moe/moe_graph.h"
#include "strategies/moe/moe_setup.h"
#include "strategies/moe/moe_strategies.h"
#include "strategies/moe/persistent_placement.h"

namespace stratasim {

double ProProphetLayerSeconds(const LayerDecision& d, int ranks, const MoeCostModel& m,
                              bool scheduled) {
  // T_Trans(s, n) = s (D - n) size(params) / (D B), summed over the replicated experts;
  // T_Agg moves the same bytes of gradients.
  const double trans = ReplicaTransferSeconds(d, ranks, m);
  return ProProphetLayerSeconds(d, m, scheduled, trans, trans);
}

double ProProphetLayerSeconds(const LayerDecision& d, const MoeCostModel& m, bool scheduled,
                              double trans, double agg) {
  const double a2a = AllToAllSeconds(d, m), fec = ExpertSeconds(d, m);
  if (!scheduled) return 4 * a2a + 3 * fec + trans + agg;
  return 4 * a2a + 3 * fec + std::max(0.0, trans - fec - m.dense_fwd_s) +
         std::max(0.0, agg - 2 * fec - m.dense_bwd_s);
}

namespace {

// C of the public code (king0722/Pro-Prophet, load-balancing/search_algorithm.py, `C_max = 1;
// C = min(min(torch.sum(all_global_expert_count.view(world_size, world_size * num_expert) ==
// 0, dim=1)).item(), C_max)`): the fewest zero entries any device has among the counts it
// receives for its experts (from every source), at most 1. Computed once, before the rounds.
int ExcludedSources(const TokenMatrix& predicted, int experts_per_rank) {
  const int n = static_cast<int>(predicted.size());
  const int kMaxExcluded = 1;  // the code's C_max ("TODO: Adaptive C")
  int fewest = kMaxExcluded;
  for (int device = 0; device < n; ++device) {
    int zeros = 0;
    for (int e = device * experts_per_rank; e < (device + 1) * experts_per_rank; ++e) {
      for (int r = 0; r < n; ++r) zeros += predicted[r][e] == 0 ? 1 : 0;
    }
    fewest = std::min(fewest, zeros);
  }
  return fewest;
}

}  // namespace

std::vector<Replica> ProProphetSearch(const TokenMatrix& predicted, int experts_per_rank,
                                      const MoeCostModel& m, double alpha, bool scheduled) {
  const int n = static_cast<int>(predicted.size());
  const int experts = n * experts_per_rank;
  double total = 0;
  const std::vector<double> load = ExpertLoads(predicted, &total);
  const int excluded = ExcludedSources(predicted, experts_per_rank);
  std::vector<Replica> list;
  std::vector<char> replicated(experts, 0);
  LayerDecision d = ReplicatedPlacement(predicted, experts_per_rank, list, false);
  double best = ProProphetLayerSeconds(d, n, m, scheduled);
  size_t improving = 0;
  for (int round = 0; round < experts && n > 1; ++round) {
    const std::vector<double>& h = d.load_after;
    const auto [lo, hi] = std::minmax_element(h.begin(), h.end());
    // search_algorithm.py: `balanced_condition = 3 * args.top_k * args.global_batch_size *
    // args.seq_length / world_size`, the loop running while max - min >= it: alpha (3) times
    // the mean device load I / D, I the tokens routed (top-k counted).
    if (*hi - *lo < alpha * total / n) break;
    const int device = static_cast<int>(hi - h.begin());
    int x = -1;
    for (int e = device * experts_per_rank; e < (device + 1) * experts_per_rank; ++e) {
      if (!replicated[e] && (x < 0 || load[e] > load[x])) x = e;
    }
    if (x < 0 || load[x] <= 0) break;
    replicated[x] = 1;
    // search_algorithm.py replicates to Coe = world_size - C devices, the C left out being the
    // sources with the fewest tokens for the expert (`torch.topk(all_global_expert_count
    // [maxx_idx], k=C, dim=0, largest=False)`; ties to the lower rank here). The code's topk
    // ranges over the owner too; here the owner, which holds the expert anyway, is not a
    // candidate, so C other devices are left out.
    std::vector<int> others;
    for (int r = 0; r < n; ++r) {
      if (r != device) others.push_back(r);
    }
    std::stable_sort(others.begin(), others.end(),
                     [&](int a, int b) { return predicted[a][x] < predicted[b][x]; });
    Replica rep{
        x, device,
        std::vector<int>(others.begin() + std::min<size_t>(excluded, others.size()), others.end())};
    std::sort(rep.holders.begin(), rep.holders.end());
    if (rep.holders.empty()) break;
    list.push_back(rep);
    d = ReplicatedPlacement(predicted, experts_per_rank, list, false);
    const double c = ProProphetLayerSeconds(d, n, m, scheduled);
    // search_algorithm.py: `if lat_comm < min_time: min_time = lat_comm; cntt += 1` and
    // `return seq[:cntt]`: the count of rounds that lowered the best modelled time, taken as a
    // prefix. That is the best prefix when the improving rounds come first (the usual case: a
    // round that does not improve is followed by heavier transfers); otherwise it keeps a
    // non-improving round and drops a later improving one, as the code does.
    if (c < best) {
      best = c;
      ++improving;
    }
  }
  list.resize(improving);
  return list;
}

const OptionSpecs& ProProphetOptions() {
  static const OptionSpecs options = Join(
      MoeRoutingOptions(),
      {
          Flag("schedule", "the block-wise scheduler; false: transfers exposed").Default("true"),
          Number("alpha", 0, 1e6,
                 "stop when max - min device load < alpha x mean device load (I / D)")
              .Default("3"),
          Flag("persistent",
               "copies stay on their holders (which keep their Adam state; gradients "
               "all-reduced) until staying has cost, summed since the last switch, more than "
               "sending the fresh plan's new copies their state; false (the papers' design): "
               "re-send every copy every iteration")
              .Default("false"),
      });
  return options;
}

Plan PlanProProphet(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, ProProphetOptions());
  const MoeSetup st = ReadMoeSetup(s, spec, opt);
  const bool scheduled = opt.Bool("schedule");
  const double alpha = opt.Double("alpha");
  const bool persistent = opt.Bool("persistent");
  opt.Finish();
  const MoeCostModel m = MakeMoeCostModel(s, st);
  const CopyStateBytes state = ExpertCopyStateBytes(st.expert_params, st.dtype);
  const LayerSecondsFn seconds = [&](const LayerDecision& d, double trans_s, double agg_s) {
    return ProProphetLayerSeconds(d, m, scheduled, trans_s, agg_s);
  };
  std::vector<std::vector<LayerDecision>> decisions(st.iterations);
  // Persistent placements (KeepOrReplan): what staying has cost, per layer and group.
  const int groups = st.ranks / st.expert_parallel;
  std::vector<double> regret_s(static_cast<size_t>(st.layers) * groups, 0);
  for (int t = 0; t < st.iterations; ++t) {
    for (int l = 0; l < st.layers; ++l) {
      const TokenMatrix actual = st.routing.Matrix(t, l);
      // The plan for iteration t comes from iteration t - 1's counts (§4.3: it runs while the
      // all-to-all of t - 1 is in flight); the first iteration has no history.
      // Each expert-parallel group is planned on its own rows (ep_groups.h); with persistent
      // placements each group keeps or replaces its own previous copies.
      const TokenMatrix prev = t == 0 ? TokenMatrix{} : st.routing.Matrix(t - 1, l);
      decisions[t].push_back(
          PerExpertParallelGroup(actual, st.expert_parallel, [&](int g, const TokenMatrix& rows) {
            std::vector<Replica> reps;
            if (t > 0) {
              const TokenMatrix predicted = GroupRows(prev, g, st.expert_parallel);
              reps = ProProphetSearch(predicted, st.experts_per_rank, m, alpha, scheduled);
              if (persistent) {
                reps =
                    KeepOrReplan(predicted, st.experts_per_rank, false,
                                 GroupReplicas(decisions[t - 1][l].replicas, g, st.expert_parallel),
                                 std::move(reps), seconds, m, state, &regret_s[l * groups + g])
                        .replicas;
              }
            }
            return ReplicatedPlacement(rows, st.experts_per_rank, reps, false);
          }));
    }
  }
  MoeSchedule sc;
  sc.transfers =
      scheduled ? TransferSchedule::kSplitPreviousBlock : TransferSchedule::kBeforeDispatch;
  sc.overlap_aggregation = scheduled;
  sc.persistent = persistent;
  Plan plan = BuildMoePlan(st, decisions, sc);
  plan.notes.push_back(
      std::string("planner: greedy lightweight replication from the previous "
                  "iteration; scheduler ") +
      (scheduled ? "block-wise (transfers split over the previous block)"
                 : "off (transfers exposed)") +
      (persistent ? "; persistent placements" : "; copies re-sent every iteration"));
  return plan;
}

}  // namespace stratasim
