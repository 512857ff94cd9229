#include "strategies/moe/pro_prophet.h"

#include <algorithm>
#include <numeric>

#include "strategies/moe/ep_groups.h"
#include "strategies/moe/moe_graph.h"
#include "strategies/moe/moe_setup.h"
#include "strategies/moe/moe_strategies.h"

namespace stratasim {

double ProProphetLayerSeconds(const LayerDecision& d, int ranks, const MoeCostModel& m,
                              bool scheduled) {
  const double a2a = AllToAllSeconds(d, m), fec = ExpertSeconds(d, m);
  // T_Trans(s, n) = s (D - n) size(params) / (D B), summed over the replicated experts;
  // T_Agg moves the same bytes of gradients.
  const double trans = ReplicaTransferSeconds(d, ranks, m);
  const double agg = trans;
  if (!scheduled) return 4 * a2a + 3 * fec + trans + agg;
  return 4 * a2a + 3 * fec + std::max(0.0, trans - fec - m.dense_fwd_s) +
         std::max(0.0, agg - 2 * fec - m.dense_bwd_s);
}

std::vector<Replica> ProProphetSearch(const TokenMatrix& predicted, int experts_per_rank,
                                      const MoeCostModel& m, double alpha, bool scheduled) {
  const int n = static_cast<int>(predicted.size());
  const int experts = n * experts_per_rank;
  double total = 0;
  const std::vector<double> load = ExpertLoads(predicted, &total);
  std::vector<Replica> list;
  std::vector<char> replicated(experts, 0);
  LayerDecision d = ReplicatedPlacement(predicted, experts_per_rank, list, false);
  double best = ProProphetLayerSeconds(d, n, m, scheduled);
  size_t best_len = 0;
  for (int round = 0; round < experts && n > 1; ++round) {
    const std::vector<double>& h = d.load_after;
    const auto [lo, hi] = std::minmax_element(h.begin(), h.end());
    if (*hi - *lo < alpha * total / experts) break;
    const int device = static_cast<int>(hi - h.begin());
    int x = -1;
    for (int e = device * experts_per_rank; e < (device + 1) * experts_per_rank; ++e) {
      if (!replicated[e] && (x < 0 || load[e] > load[x])) x = e;
    }
    if (x < 0 || load[x] <= 0) break;
    replicated[x] = 1;
    // Candidate holders, most tokens for x first: excluding the n with the fewest.
    std::vector<int> others;
    for (int r = 0; r < n; ++r) {
      if (r != device) others.push_back(r);
    }
    std::stable_sort(others.begin(), others.end(),
                     [&](int a, int b) { return predicted[a][x] > predicted[b][x]; });
    double chosen_cost = 0;
    LayerDecision chosen;
    Replica chosen_rep;
    for (size_t keep = 1; keep <= others.size(); ++keep) {
      Replica rep{x, device, std::vector<int>(others.begin(), others.begin() + keep)};
      std::sort(rep.holders.begin(), rep.holders.end());
      std::vector<Replica> trial = list;
      trial.push_back(rep);
      LayerDecision td = ReplicatedPlacement(predicted, experts_per_rank, trial, false);
      const double c = ProProphetLayerSeconds(td, n, m, scheduled);
      if (keep == 1 || c < chosen_cost) {
        chosen_cost = c;
        chosen = std::move(td);
        chosen_rep = rep;
      }
    }
    list.push_back(chosen_rep);
    d = std::move(chosen);
    if (chosen_cost < best) {
      best = chosen_cost;
      best_len = list.size();
    }
  }
  list.resize(best_len);
  return list;
}

const OptionSpecs& ProProphetOptions() {
  static const OptionSpecs options = Join(
      MoeRoutingOptions(),
      {
          Flag("schedule", "the block-wise scheduler; false: transfers exposed").Default("true"),
          Number("alpha", 0, 1e6,
                 "stop when max - min device load < alpha x mean expert load (I / E)")
              .Default("3"),
      });
  return options;
}

Plan PlanProProphet(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, ProProphetOptions());
  const MoeSetup st = ReadMoeSetup(s, spec, opt);
  const bool scheduled = opt.Bool("schedule");
  const double alpha = opt.Double("alpha");
  opt.Finish();
  const MoeCostModel m = MakeMoeCostModel(s, st);
  std::vector<std::vector<LayerDecision>> decisions(st.iterations);
  for (int t = 0; t < st.iterations; ++t) {
    for (int l = 0; l < st.layers; ++l) {
      const TokenMatrix actual = st.routing.Matrix(t, l);
      // The plan for iteration t comes from iteration t - 1's counts (§4.3: it runs while the
      // all-to-all of t - 1 is in flight); the first iteration has no history.
      // Each expert-parallel group is planned on its own rows (ep_groups.h).
      const TokenMatrix prev = t == 0 ? TokenMatrix{} : st.routing.Matrix(t - 1, l);
      decisions[t].push_back(
          PerExpertParallelGroup(actual, st.expert_parallel, [&](int g, const TokenMatrix& rows) {
            const std::vector<Replica> reps =
                t == 0 ? std::vector<Replica>{}
                       : ProProphetSearch(GroupRows(prev, g, st.expert_parallel),
                                          st.experts_per_rank, m, alpha, scheduled);
            return ReplicatedPlacement(rows, st.experts_per_rank, reps, false);
          }));
    }
  }
  MoeSchedule sc;
  sc.transfers =
      scheduled ? TransferSchedule::kSplitPreviousBlock : TransferSchedule::kBeforeDispatch;
  sc.overlap_aggregation = scheduled;
  Plan plan = BuildMoePlan(st, decisions, sc);
  plan.notes.push_back(std::string("planner: greedy lightweight replication from the previous "
                                   "iteration; scheduler ") +
                       (scheduled ? "block-wise (transfers split over the previous block)"
                                  : "off (transfers exposed)"));
  return plan;
}

}  // namespace stratasim
