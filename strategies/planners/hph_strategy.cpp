// Strategy kind `hph` (hph_strategy.h).
#include "strategies/planners/hph_strategy.h"

#include "strategies/planners/hph.h"
#include "strategies/planners/hph_topology.h"
#include "strategies/planners/lower_plan.h"
#include "strategies/planners/planner_options.h"

namespace stratasim {

const OptionSpecs& HphOptions() {
  static const OptionSpecs options =
      Join(planners::PlannerOptions(),
           {
               OneOf("mapping", {"topology", "default"},
                     "topology: HPH's designer, each stage's replicas on the fastest links and one "
                     "GPU kind per stage where possible; default: the GPUs in rank_order, for "
                     "comparison")
                   .Default("topology"),
               OneOf("partition", {"speed", "even"},
                     "speed: each stage's blocks timed on its own GPU kind and the slowest stage "
                     "made as fast as possible; even: balanced as if every GPU were of the "
                     "cluster's first kind, for comparison")
                   .Default("speed"),
               OneOf("recompute", {"auto", "off"},
                     "auto: only the stages that would otherwise run out of memory recompute, the "
                     "fewest blocks they need; off: never (a plan that does not fit is refused)")
                   .Default("auto"),
           });
  return options;
}

Plan PlanHphStrategy(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, HphOptions());
  planners::PlannerDegrees degrees;
  PipelineShape base = planners::ReadPlannerShape(s, opt, degrees);
  planners::HphSettings settings;
  settings.topology = opt.Choice("mapping") == "topology";
  settings.rank_order = base.order;
  if (settings.topology && opt.Given("rank_order")) {
    throw opt.Fail("rank_order",
                   "only applies with mapping: default (the topology designer places the ranks)");
  }
  settings.speed_weighted = opt.Choice("partition") == "speed";
  settings.recompute = opt.Choice("recompute") == "auto";
  opt.Finish();
  const planners::PlannerInput in = planners::BuildPlannerInput(s, degrees);
  planners::PlannedPipeline planned = planners::PlanHph(in, settings);
  // A designed layout that one of the lowering's rank orders numbers is lowered with that order
  // (the same GPUs in the same positions), which every version of the lowering takes.
  const std::string order = planners::RankOrderOf(in, planned.ranks);
  if (!planned.ranks.empty() && !order.empty()) {
    base.order = order;
    planned.ranks.clear();
    planned.notes.push_back("hph: the designer's layout is rank order " + order);
  }
  return planners::LowerPlannedPipeline(s, base, planned, "hph");
}

}  // namespace stratasim
