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
  if (spec.model) out.model = *spec.model;
  if (spec.training) out.training = *spec.training;
  return out;
}

std::vector<std::string> DescribeOverrides(const Scenario& s, const StrategySpec& spec) {
  std::vector<std::string> notes;
  auto note = [&](const std::string& key, const std::string& mine, const std::string& theirs) {
    if (mine != theirs) notes.push_back(key + " = " + mine + " (the scenario's: " + theirs + ")");
  };
  if (spec.model) {
    const ModelSpec &m = *spec.model, &base = s.model;
    note("model.attention", std::string(ToString(m.attention)),
         std::string(ToString(base.attention)));
    note("model.recompute", std::string(ToString(m.recompute)),
         std::string(ToString(base.recompute)));
    note("model.recompute_layers", std::to_string(m.recompute_layers),
         std::to_string(base.recompute_layers));
  }
  if (spec.training) {
    const TrainingSpec &t = *spec.training, &base = s.training;
    note("training.micro_batch", std::to_string(t.micro_batch), std::to_string(base.micro_batch));
    note("training.precision", std::string(ToString(t.precision)),
         std::string(ToString(base.precision)));
  }
  return notes;
}

}  // namespace stratasim
