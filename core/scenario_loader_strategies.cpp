// The scenario's `strategies:` section. Options stay text here: each strategy checks its own
// through OptionReader (core/scenario.cpp).
#include <string>
#include <vector>

#include "core/scenario_loader_sections.h"

namespace stratasim::scenario_sections {

using yaml::Field;
using yaml::KindOf;
using yaml::Map;

void ReadStrategyOptions(const yaml::Reader& r, const Field& f, StrategySpec* spec) {
  Map om(r, f, {}, /*any_key=*/true);
  for (const auto& [key, value] : om.entries()) {
    if (!value.value.IsScalar()) {
      r.Fail(value,
             "must be a scalar (a number, a string, true or false), not " + KindOf(value.value));
    }
    spec->options[key] = OptionValue{value.value.Scalar(), r.WhereOf(value)};
  }
}

std::vector<StrategySpec> ReadStrategies(const yaml::Reader& r, const Field& f,
                                         const ModelSpec& model, const TrainingSpec& training) {
  std::vector<StrategySpec> out;
  std::vector<YAML::Node> name_nodes;
  for (const Field& item : r.List(f, true)) {
    Map m(r, item, {"name", "kind", "options", "model", "training", "stragglers"});
    StrategySpec s;
    Field name = m.Require("name");
    s.name = r.PlainName(name);
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].name == s.name) {
        r.Fail(name, "duplicate strategy name (" + r.FirstAt(name_nodes[i]) + ")");
      }
    }
    s.kind = r.Name(m.Require("kind"));
    s.where = r.Where(item.value);
    s.key_path = item.path;
    if (auto options = m.Get("options")) ReadStrategyOptions(r, *options, &s);
    if (auto changed = m.Get("model")) ReadModelOverride(r, *changed, model, &s.own);
    if (auto changed = m.Get("training")) ReadTrainingOverride(r, *changed, training, &s.own);
    if (auto stragglers = m.Get("stragglers")) {
      const std::string v = stragglers->value.IsScalar() ? stragglers->value.Scalar() : "";
      if (v != "on" && v != "off") {
        r.Fail(*stragglers, "must be \"on\" (the default: the cluster's stragglers) or \"off\"");
      }
      s.stragglers_off = v == "off";
    }
    out.push_back(s);
    name_nodes.push_back(name.value);
  }
  return out;
}

}  // namespace stratasim::scenario_sections
