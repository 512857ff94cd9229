#include "core/scenario.h"

namespace stratasim {

std::string_view ToString(Fidelity f) {
  switch (f) {
    case Fidelity::kStep:
      return "step";
    case Fidelity::kStream:
      return "stream";
    case Fidelity::kAnalytic:
      return "analytic";
  }
  return "?";
}

Scenario ScenarioFor(const Scenario& s, const StrategySpec& spec) {
  Scenario out = s;
  const TrainingChoices& own = spec.own;
  if (own.attention) out.model.attention = *own.attention;
  if (own.recompute) out.model.recompute = *own.recompute;
  if (own.recompute_layers) out.model.recompute_layers = *own.recompute_layers;
  if (own.micro_batch) out.training.micro_batch = *own.micro_batch;
  if (own.precision) {
    out.training.precision = *own.precision;
    out.training.precision_where = own.precision_where;
  }
  if (spec.stragglers_off) out.cluster.stragglers.entries.clear();
  return out;
}

std::vector<std::string> DescribeOverrides(const Scenario& s, const StrategySpec& spec) {
  std::vector<std::string> notes;
  if (spec.stragglers_off && !s.cluster.stragglers.empty()) {
    const size_t n = s.cluster.stragglers.entries.size();
    notes.push_back("stragglers = off (the scenario's: " + std::to_string(n) +
                    (n == 1 ? " entry)" : " entries)"));
  }
  if (spec.own.empty()) return notes;
  const Scenario mine = ScenarioFor(s, spec);
  auto note = [&](const std::string& key, const std::string& value, const std::string& base) {
    if (value != base) notes.push_back(key + " = " + value + " (the scenario's: " + base + ")");
  };
  note("model.attention", std::string(ToString(mine.model.attention)),
       std::string(ToString(s.model.attention)));
  note("model.recompute", std::string(ToString(mine.model.recompute)),
       std::string(ToString(s.model.recompute)));
  note("model.recompute_layers", std::to_string(mine.model.recompute_layers),
       std::to_string(s.model.recompute_layers));
  note("training.micro_batch", std::to_string(mine.training.micro_batch),
       std::to_string(s.training.micro_batch));
  note("training.precision", std::string(ToString(mine.training.precision)),
       std::string(ToString(s.training.precision)));
  return notes;
}

}  // namespace stratasim
