#include "strategies/plan.h"

#include "strategies/data/ddp.h"

namespace stratasim {

std::vector<std::string> StrategyKinds() { return {"ddp"}; }

Plan PlanStrategy(const Scenario& s, const StrategySpec& spec) {
  if (spec.kind == "ddp") return PlanDdp(s, spec);
  std::string known;
  for (const std::string& k : StrategyKinds()) known += (known.empty() ? "" : ", ") + k;
  throw ConfigError(spec.where, spec.key_path + ".kind", spec.kind,
                    "unknown strategy kind (known: " + known + ")");
}

}  // namespace stratasim
