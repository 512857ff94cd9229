#include "strategies/moe/prophet.h"

#include <algorithm>

#include "strategies/moe/ep_groups.h"
#include "strategies/moe/moe_graph.h"
#include "strategies/moe/moe_setup.h"
#include "strategies/moe/moe_strategies.h"
#include "strategies/moe/persistent_placement.h"

namespace stratasim {
namespace {

// Modelled layer time: transfers hidden behind the previous layer's forward (dense compute,
// expert compute and its two all-to-alls) and the gradient reduces behind its backward.
// `trans_s` and `agg_s`: the parameter transfers' and the gradient aggregation's seconds.
double ProphetLayerSeconds(const LayerDecision& d, const MoeCostModel& m, bool scheduled,
                           double trans_s, double agg_s) {
  const double a2a = AllToAllSeconds(d, m), fec = ExpertSeconds(d, m);
  if (!scheduled) return 4 * a2a + 3 * fec + trans_s + agg_s;
  return 4 * a2a + 3 * fec + std::max(0.0, trans_s - (m.dense_fwd_s + fec + 2 * a2a)) +
         std::max(0.0, agg_s - (m.dense_bwd_s + 2 * fec + 2 * a2a));
}

// Re-sending every copy: the gradients' reduce moves the parameters' bytes.
double ProphetLayerSeconds(const LayerDecision& d, int ranks, const MoeCostModel& m,
                           bool scheduled) {
  const double trans = ReplicaTransferSeconds(d, ranks, m);
  return ProphetLayerSeconds(d, m, scheduled, trans, trans);
}

}  // namespace

std::vector<Replica> ProphetPlan(const TokenMatrix& predicted, int experts_per_rank,
                                 const MoeCostModel& m, double alpha, bool scheduled) {
  const int n = static_cast<int>(predicted.size());
  const int experts = n * experts_per_rank;
  double total = 0;
  const std::vector<double> load = ExpertLoads(predicted, &total);
  std::vector<Replica> reps;
  LayerDecision d = ReplicatedPlacement(predicted, experts_per_rank, reps, true);
  double best = ProphetLayerSeconds(d, n, m, scheduled);
  const int max_copies = std::max(1, n * experts / 2);
  for (int copy = 0; copy < max_copies && n > 1; ++copy) {
    const std::vector<double>& h = d.load_after;
    const auto [lo, hi] = std::minmax_element(h.begin(), h.end());
    // Pro-Prophet's balanced condition (king0722/Pro-Prophet, load-balancing/
    // search_algorithm.py: `balanced_condition = 3 * args.top_k * args.global_batch_size *
    // args.seq_length / world_size`): alpha times the mean device load I / D.
    if (*hi - *lo < alpha * total / n) break;
    const int device = static_cast<int>(hi - h.begin());
    // The heaviest expert of the device: owned there, with copies that still leave room.
    int x = -1;
    for (int e = device * experts_per_rank; e < (device + 1) * experts_per_rank; ++e) {
      if (x < 0 || load[e] > load[x]) x = e;
    }
    auto it =
        std::find_if(reps.begin(), reps.end(), [&](const Replica& r) { return r.expert == x; });
    std::vector<Replica> trial = reps;
    Replica* rep = nullptr;
    if (it == reps.end()) {
      trial.push_back(Replica{x, device, {}});
      rep = &trial.back();
    } else {
      rep = &trial[it - reps.begin()];
    }
    int target = -1;
    for (int r = 0; r < n; ++r) {
      if (r == device ||
          std::find(rep->holders.begin(), rep->holders.end(), r) != rep->holders.end())
        continue;
      if (target < 0 || h[r] < h[target]) target = r;
    }
    if (target < 0) break;
    rep->holders.push_back(target);
    LayerDecision td = ReplicatedPlacement(predicted, experts_per_rank, trial, true);
    const double c = ProphetLayerSeconds(td, n, m, scheduled);
    if (c >= best) break;
    best = c;
    reps = std::move(trial);
    d = std::move(td);
  }
  return reps;
}

const OptionSpecs& ProphetOptions() {
  static const OptionSpecs options = Join(
      MoeRoutingOptions(),
      {
          Flag("schedule", "the layer-wise scheduler; false: transfers exposed").Default("true"),
          Number("history", 1e-6, 1,
                 "weight of the newest iteration in the moving average of the load")
              .Default("0.5"),
          Number("alpha", 0, 1e6,
                 "stop placing when max - min device load < alpha x mean device load "
                 "(I / D, Pro-Prophet's rule)")
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

Plan PlanProphet(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, ProphetOptions());
  const MoeSetup st = ReadMoeSetup(s, spec, opt);
  const bool scheduled = opt.Bool("schedule");
  const double history = opt.Double("history");
  const double alpha = opt.Double("alpha");
  const bool persistent = opt.Bool("persistent");
  opt.Finish();
  const MoeCostModel m = MakeMoeCostModel(s, st);
  const CopyStateBytes state = ExpertCopyStateBytes(st.expert_params, st.dtype);
  const LayerSecondsFn seconds = [&](const LayerDecision& d, double trans_s, double agg_s) {
    return ProphetLayerSeconds(d, m, scheduled, trans_s, agg_s);
  };
  std::vector<std::vector<LayerDecision>> decisions(st.iterations);
  // Persistent placements (KeepOrReplan): what staying has cost, per layer and group.
  const int groups = st.ranks / st.expert_parallel;
  std::vector<double> regret_s(static_cast<size_t>(st.layers) * groups, 0);
  std::vector<TokenMatrix> predicted(st.layers);
  for (int t = 0; t < st.iterations; ++t) {
    for (int l = 0; l < st.layers; ++l) {
      const TokenMatrix actual = st.routing.Matrix(t, l);
      if (t > 0) {
        const TokenMatrix prev = st.routing.Matrix(t - 1, l);
        if (t == 1) {
          predicted[l] = prev;
        } else {
          for (size_t r = 0; r < prev.size(); ++r) {
            for (size_t x = 0; x < prev[r].size(); ++x) {
              predicted[l][r][x] = history * prev[r][x] + (1 - history) * predicted[l][r][x];
            }
          }
        }
      }
      // Each expert-parallel group is planned on its own rows (ep_groups.h).
      decisions[t].push_back(
          PerExpertParallelGroup(actual, st.expert_parallel, [&](int g, const TokenMatrix& rows) {
            std::vector<Replica> reps;
            if (t > 0) {
              const TokenMatrix group_predicted = GroupRows(predicted[l], g, st.expert_parallel);
              reps = ProphetPlan(group_predicted, st.experts_per_rank, m, alpha, scheduled);
              if (persistent) {
                reps =
                    KeepOrReplan(group_predicted, st.experts_per_rank, true,
                                 GroupReplicas(decisions[t - 1][l].replicas, g, st.expert_parallel),
                                 std::move(reps), seconds, m, state, &regret_s[l * groups + g])
                        .replicas;
              }
            }
            return ReplicatedPlacement(rows, st.experts_per_rank, reps, true);
          }));
    }
  }
  MoeSchedule sc;
  sc.transfers = scheduled ? TransferSchedule::kPreviousLayer : TransferSchedule::kBeforeDispatch;
  sc.overlap_aggregation = scheduled;
  sc.persistent = persistent;
  Plan plan = BuildMoePlan(st, decisions, sc);
  plan.notes.push_back(
      std::string("planner: moving-average prediction, fine-grained replicas; "
                  "scheduler ") +
      (scheduled ? "layer-wise" : "off (transfers exposed)") +
      (persistent ? "; persistent placements" : "; copies re-sent every iteration"));
  return plan;
}

}  // namespace stratasim
