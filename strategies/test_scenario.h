// Shared by the strategies' unit tests: a tiny GPT on NVSwitch A100 servers, and a strategy
// spec with options as a scenario file would give them.
#ifndef STRATASIM_STRATEGIES_TEST_SCENARIO_H_
#define STRATASIM_STRATEGIES_TEST_SCENARIO_H_

#include <map>
#include <string>

#include "core/scenario.h"
#include "strategies/plan.h"

namespace stratasim::testing {

struct TinyGpt {
  int gpus_per_server = 8;
  int servers = 1;
  int global_batch = 8;
  int micro_batch = 1;
  int layers = 4;
  int heads = 4;
};

// One measured iteration, no warm-up, BF16; GPT of `layers` x 256 hidden, sequence 128.
inline Scenario TinyGptScenario(const TinyGpt& t) {
  Scenario s;
  s.name = "t";
  ServerGroup g;
  g.name = "g";
  g.count = t.servers;
  g.gpu = "A100-SXM4-80GB";
  g.gpus_per_server = t.gpus_per_server;
  g.nvswitch = NvSwitchSpec{LinkSpec{300e9, 1e-6}};
  s.cluster.groups.push_back(g);
  s.model.preset = "tiny";
  s.model.layers = t.layers;
  s.model.hidden = 256;
  s.model.heads = t.heads;
  s.model.sequence = 128;
  s.model.vocabulary = 1000;
  s.training.global_batch = t.global_batch;
  s.training.micro_batch = t.micro_batch;
  s.training.precision = DType::kBF16;
  s.training.warmup_iterations = 0;
  s.training.measured_iterations = 1;
  return s;
}

// A spec as strategies[0] of s.yaml, at line 8, column 5, every option at line 9, column 5.
inline StrategySpec SpecOf(const std::string& name, const std::string& kind,
                           const std::map<std::string, std::string>& options) {
  StrategySpec spec;
  spec.name = name;
  spec.kind = kind;
  spec.key_path = "strategies[0]";
  spec.where = SourceLocation{"s.yaml", 8, 5};
  for (const auto& [k, v] : options) {
    spec.options[k] = OptionValue{v, SourceLocation{"s.yaml", 9, 5}};
  }
  return spec;
}

// What planning `spec` on `s` raises as a ConfigError (its full text), or "no error".
inline std::string PlanErrorOf(const Scenario& s, const StrategySpec& spec) {
  try {
    PlanStrategy(s, spec);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace stratasim::testing

#endif  // STRATASIM_STRATEGIES_TEST_SCENARIO_H_
