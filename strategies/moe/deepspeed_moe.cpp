// DeepSpeed-MoE's expert-parallel step (deepspeed/moe/sharded_moe.py: top1gating/top2gating,
// _capacity, MOELayer.forward), the baseline the other MoE strategies are compared against.
#include <algorithm>
#include <cmath>

#include "core/collective_names.h"
#include "strategies/moe/ep_groups.h"
#include "strategies/moe/moe_graph.h"
#include "strategies/moe/moe_setup.h"
#include "strategies/moe/moe_strategies.h"

namespace stratasim {

const OptionSpecs& DeepSpeedMoeOptions() {
  static const OptionSpecs options = Join(
      MoeRoutingOptions(),
      {
          OneOf("dispatch", {"padded", "routed"},
                "padded: DeepSpeed's [E, C, M] buffer with equal all-to-all splits, every slot "
                "computed; routed: all-to-all-v of the routed counts")
              .Default("padded"),
          Flag("drop_tokens", "cap each expert at the capacity and drop the overflow")
              .Default("false"),
          Number("capacity_factor", 1e-3, 1e3,
                 "cf of the gate's capacity C = max(ceil(k cf S / E), min_capacity)")
              .Derived("the model's capacity_factor"),
          Integer("min_capacity", 0, 1 << 30, "the floor of the gate's capacity (DeepSpeed's)")
              .Default("4"),
          OneOf("algorithm", CollectiveAlgorithms(CollectiveKind::kAllToAllV),
                "all-to-all algorithm (docs/collectives.md)")
              .Default("auto"),
      });
  return options;
}

Plan PlanDeepSpeedMoe(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, DeepSpeedMoeOptions());
  const MoeSetup st = ReadMoeSetup(s, spec, opt);
  const bool padded = opt.Choice("dispatch") == "padded";
  const bool drop = opt.Bool("drop_tokens");
  const double cf = opt.Double("capacity_factor", st.capacity_factor);
  const int min_capacity = opt.Int("min_capacity");
  MoeSchedule sc;
  sc.a2a_algorithm = opt.Choice("algorithm");
  opt.Finish();

  // DeepSpeed's _capacity: ceil(tokens / experts * capacity_factor), top-2 doubling the
  // factor, floored at min_capacity; per source rank (each gate sees its own micro-batch).
  const double capacity =
      std::max<double>(std::ceil(st.tokens_per_rank / st.experts * cf * st.top_k), min_capacity);
  std::vector<std::vector<LayerDecision>> decisions(st.iterations);
  for (int t = 0; t < st.iterations; ++t) {
    for (int l = 0; l < st.layers; ++l) {
      const TokenMatrix m = st.routing.Matrix(t, l);
      double cap = drop ? capacity : 0;
      if (!drop && padded) {
        // drop_tokens=False: the capacity becomes the largest count over all ranks and experts
        // (DeepSpeed all-reduces it over the world, so every expert-parallel group pads alike).
        for (const auto& row : m) cap = std::max(cap, *std::max_element(row.begin(), row.end()));
        cap = std::max(cap, 1.0);
      }
      // Each expert-parallel group dispatches among its own members (ep_groups.h).
      decisions[t].push_back(
          PerExpertParallelGroup(m, st.expert_parallel, [&](int, const TokenMatrix& rows) {
            return OwnerPlacement(rows, st.experts_per_rank, cap, padded);
          }));
    }
  }
  Plan plan = BuildMoePlan(st, decisions, sc);
  plan.moe->baseline = true;  // plain expert parallelism: what the other MoE strategies improve
  plan.notes.push_back(
      std::string("dispatch ") + (padded ? "padded to capacity" : "routed sizes") +
      (drop ? ", tokens over capacity " + std::to_string(static_cast<long>(capacity)) + " dropped"
            : ", no dropping"));
  return plan;
}

}  // namespace stratasim
