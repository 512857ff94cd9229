#include "strategies/plan.h"

#include "strategies/data/ddp.h"
#include "strategies/moe/moe_strategies.h"
#include "strategies/pipeline/pipeline.h"
#include "strategies/sharded/zero.h"
#include "strategies/tensor/megatron.h"

namespace stratasim {
namespace {

struct Entry {
  const char* kind;
  Plan (*plan)(const Scenario&, const StrategySpec&);
};

// Every strategy kind and the planner that lowers it; each planner reads its own options.
constexpr Entry kPlanners[] = {
    {"ddp", PlanDdp},
    {"zero1", PlanZero},
    {"zero2", PlanZero},
    {"zero3", PlanZero},
    {"tensor", PlanTensorParallel},
    {"pipeline", PlanPipeline},
    {"3d", PlanPipeline},
    {"deepspeed-moe", PlanDeepSpeedMoe},
    {"fastermoe", PlanFasterMoe},
    {"prophet", PlanProphet},
    {"pro-prophet", PlanProProphet},
};

}  // namespace

std::vector<std::string> StrategyKinds() {
  std::vector<std::string> kinds;
  for (const Entry& e : kPlanners) kinds.emplace_back(e.kind);
  return kinds;
}

Plan PlanStrategy(const Scenario& s, const StrategySpec& spec) {
  for (const Entry& e : kPlanners) {
    if (spec.kind != e.kind) continue;
    Plan plan = e.plan(s, spec);
    if (plan.fold.empty()) {
      // Planners that do not fold say nothing; the report says why they ran in full.
      const bool moe = s.model.kind == "moe";
      plan.fold =
          !s.simulation.fold ? "full: simulation.fold is off"
          : moe              ? "full: MoE routing differs per GPU"
                : "full: folding is implemented for kinds ddp, zero1/2/3, tensor, pipeline and 3d";
    }
    return plan;
  }
  std::string known;
  for (const std::string& k : StrategyKinds()) known += (known.empty() ? "" : ", ") + k;
  throw ConfigError(spec.where, spec.key_path + ".kind", spec.kind,
                    "unknown strategy kind (known: " + known + ")");
}

}  // namespace stratasim
