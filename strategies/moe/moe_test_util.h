// What the MoE unit tests share: a small MoE scenario, a plan's collectives of one kind and a
// round-number cost model (header-only, test code).
#ifndef STRATASIM_STRATEGIES_MOE_MOE_TEST_UTIL_H_
#define STRATASIM_STRATEGIES_MOE_MOE_TEST_UTIL_H_

#include <vector>

#include "core/hardware.h"
#include "core/scenario.h"
#include "strategies/moe/moe_cost.h"
#include "strategies/plan.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace testing {

// 8 A100s on NVSwitch, a 2-layer MoE with 8 experts, 128 tokens per GPU, 1 warm-up and 2
// measured iterations.
inline Scenario TinyMoe() {
  TinyGpt t;
  t.layers = 2;
  Scenario s = TinyGptScenario(t);
  s.model.kind = "moe";
  s.model.experts = 8;
  s.model.top_k = 1;
  s.model.capacity_factor = 1.25;
  s.training.warmup_iterations = 1;
  s.training.measured_iterations = 2;
  s.training.seed = 5;
  s.cluster.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  return s;
}

inline std::vector<const Collective*> CollectivesOfKind(const Plan& p, CollectiveKind k) {
  std::vector<const Collective*> out;
  for (const Collective& c : p.graph.collectives()) {
    if (c.kind == k) out.push_back(&c);
  }
  return out;
}

// 1 us per token of compute and of all-to-all (1000 bytes at 1 GB/s), 100 us per expert's
// parameters over the network (1e5 bytes at 1 GB/s).
inline MoeCostModel UnitMoeCostModel() {
  MoeCostModel m;
  m.token_s = 1e-6;
  m.net_Bps = 1e9;
  m.bytes_per_token = 1000;
  m.expert_bytes = 1e5;
  return m;
}

}  // namespace testing
}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_MOE_TEST_UTIL_H_
