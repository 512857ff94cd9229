#include "strategies/moe/fastermoe.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/limits.h"
#include "strategies/moe/ep_groups.h"
#include "strategies/moe/moe_graph.h"
#include "strategies/moe/moe_setup.h"
#include "strategies/moe/moe_strategies.h"

namespace stratasim {

std::vector<Replica> FasterMoeShadows(const TokenMatrix& t, int experts_per_rank,
                                      const MoeCostModel& m) {
  const int n = static_cast<int>(t.size());
  const int experts = n * experts_per_rank;
  std::vector<double> load(experts, 0);
  for (const auto& row : t) {
    for (int x = 0; x < experts; ++x) load[x] += row[x];
  }
  std::vector<int> order(experts);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return load[a] > load[b]; });

  auto cost = [&](const std::vector<Replica>& shadows) {
    const LayerDecision d = ReplicatedPlacement(t, experts_per_rank, shadows, false);
    return 3 * ExpertSeconds(d, m) + 4 * AllToAllSeconds(d, m) +
           2.0 * shadows.size() * m.expert_bytes / m.net_Bps;
  };
  std::vector<Replica> shadows;
  double best = cost(shadows);
  for (int x : order) {
    if (n < 2 || load[x] <= 0) break;
    Replica r;
    r.expert = x;
    r.owner = x / experts_per_rank;
    for (int k = 0; k < n; ++k) {
      if (k != r.owner) r.holders.push_back(k);
    }
    shadows.push_back(r);
    const double c = cost(shadows);
    if (c >= best) {
      shadows.pop_back();
      break;
    }
    best = c;
  }
  return shadows;
}

const OptionSpecs& FasterMoeOptions() {
  static const OptionSpecs options = Join(
      MoeRoutingOptions(),
      {
          Flag("shadowing", "the performance-model shadowing policy, every iteration and layer")
              .Default("true"),
          Flag("smart_schedule", "pairwise all-to-all steps overlapped with expert compute")
              .Default("true"),
          Integer("group_size", 1, limits::kMaxGpus,
                  "workers per group of the pairwise exchange; must divide the GPUs")
              .Default("4"),
      });
  return options;
}

Plan PlanFasterMoe(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, FasterMoeOptions());
  const MoeSetup st = ReadMoeSetup(s, spec, opt);
  const bool shadowing = opt.Bool("shadowing");
  const bool smart = opt.Bool("smart_schedule");
  const int group_size = opt.Int("group_size");
  opt.Finish();
  // The pairwise exchange runs inside each expert-parallel group (all of the GPUs by default).
  if (smart && st.expert_parallel % group_size != 0) {
    throw opt.Fail(
        "group_size",
        st.expert_parallel == st.ranks
            ? "must divide the number of GPUs (" + std::to_string(st.ranks) + ")"
            : "must divide expert_parallel (" + std::to_string(st.expert_parallel) + ")");
  }
  const MoeCostModel m = MakeMoeCostModel(s, st);
  std::vector<std::vector<LayerDecision>> decisions(st.iterations);
  for (int t = 0; t < st.iterations; ++t) {
    for (int l = 0; l < st.layers; ++l) {
      // Each expert-parallel group shadows among its own members (ep_groups.h).
      decisions[t].push_back(PerExpertParallelGroup(
          st.routing.Matrix(t, l), st.expert_parallel, [&](int, const TokenMatrix& tm) {
            const std::vector<Replica> shadows =
                shadowing ? FasterMoeShadows(tm, st.experts_per_rank, m) : std::vector<Replica>{};
            return ReplicatedPlacement(tm, st.experts_per_rank, shadows, false);
          }));
    }
  }
  MoeSchedule sc;
  sc.transfers = TransferSchedule::kAfterDispatch;
  sc.overlap_aggregation = true;
  // With as many groups as workers a step is one pair: FasterMoE's fully pairwise exchange.
  sc.pairwise_group_size = smart && st.expert_parallel / group_size > 1 ? group_size : 0;
  Plan plan = BuildMoePlan(st, decisions, sc);
  plan.notes.push_back(std::string("shadowing ") + (shadowing ? "on" : "off") +
                       ", smart schedule " +
                       (sc.pairwise_group_size > 0
                            ? std::to_string(st.expert_parallel / group_size) + " pairwise steps"
                            : std::string("off")));
  return plan;
}

}  // namespace stratasim
