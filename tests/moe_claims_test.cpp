// The seed abstracts' claims for Prophet (CLUSTER'23) and Pro-Prophet (arXiv 2411.10003),
// each stated as a direction and checked on scenarios/moe-commodity-s.yaml, the papers'
// setting (4 x 4 RTX 3090, 100 Gb/s InfiniBand, one expert per GPU), with 10 measured
// iterations instead of 100 (docs/moe.md, "The papers' claims", has the 100-iteration figures).
// Where stratasim reproduces a claim's direction the test holds it; where it does not, the
// test pins the current direction and says where docs/moe.md explains it.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "report/moe_table.h"

namespace stratasim {
namespace {

const std::map<std::string, StrategyResult>& Results() {
  static const std::map<std::string, StrategyResult> results = [] {
    Scenario s =
        LoadScenarioFile(std::string(STRATASIM_SOURCE_DIR) + "/scenarios/moe-commodity-s.yaml");
    s.training.measured_iterations = 10;
    RunOptions options;
    options.jobs = 2;
    std::vector<StrategyResult> all;
    for (const StrategyRun& r : RunStrategies(s, {}, options)) all.push_back(r.result);
    SetMoeSpeedups(all);
    std::map<std::string, StrategyResult> by_name;
    for (const StrategyResult& r : all) by_name[r.name] = r;
    return by_name;
  }();
  return results;
}

const MoeSummary& Moe(const std::string& name) {
  const auto it = Results().find(name);
  if (it == Results().end() || !it->second.ok || !it->second.moe) {
    ADD_FAILURE() << name << " did not run: "
                  << (it == Results().end() ? "not in the scenario" : it->second.error);
    static const MoeSummary none;
    return none;
  }
  return *it->second.moe;
}

// Mean iteration time of `baseline` over `name`'s.
double Speedup(const std::string& name, const std::string& baseline) {
  return Moe(baseline).mean_s / Moe(name).mean_s;
}

double BalanceGain(const std::string& name, const std::string& baseline) {
  return Moe(name).load_balance_ratio / Moe(baseline).load_balance_ratio;
}

class Claims : public ::testing::TestWithParam<std::string> {};  // the gate's top-k: "1", "2"

// Prophet: "up to 2.3x speedup compared to ... Deepspeed-MoE and FasterMoE".
TEST_P(Claims, ProphetIsFasterThanDeepSpeedMoe) {
  const std::string k = GetParam();
  EXPECT_GT(Speedup("prophet-top" + k, "deepspeed-top" + k), 1.5);
}

// Over FasterMoE the direction holds for top-1 (1.11x in 10 iterations) and against FasterMoE as
// released for both; against FasterMoE's shadowing as its paper models it, top-2 Prophet is
// 1% slower: pinned (docs/moe.md, "The papers' claims").
TEST_P(Claims, ProphetAgainstFasterMoe) {
  const std::string k = GetParam();
  EXPECT_GT(Speedup("prophet-top" + k, "fastermoe-released-top" + k), 1.0);
  if (k == "1") {
    EXPECT_GT(Speedup("prophet-top1", "fastermoe-top1"), 1.0);
  } else {
    EXPECT_LT(Speedup("prophet-top2", "fastermoe-top2"), 1.0);
  }
}

// Pro-Prophet: "up to 2.66x speedup on MoE-GPT models compared to ... Deepspeed-MoE and
// FasterMoE".
TEST_P(Claims, ProProphetIsFasterThanDeepSpeedMoe) {
  const std::string k = GetParam();
  EXPECT_GT(Speedup("pro-prophet-top" + k, "deepspeed-top" + k), 1.5);
}

TEST_P(Claims, ProProphetIsFasterThanFasterMoe) {
  const std::string k = GetParam();
  EXPECT_GT(Speedup("pro-prophet-top" + k, "fastermoe-top" + k), 1.0);
  EXPECT_GT(Speedup("pro-prophet-top" + k, "fastermoe-released-top" + k), 1.0);
}

// Load balance, RB = std of the per-GPU load before balancing over std after (Pro-Prophet §6):
// "up to 12.06x" (Prophet) and "up to 11.22x" (Pro-Prophet) over FasterMoE. Against FasterMoE
// as released (fastmoe's shadowing never shadows with equal micro-batches; docs/moe.md) the
// direction holds; against FasterMoE's shadowing as its paper models it, deciding on the
// current iteration's counts and shadowing to every worker, it does not: pinned.
TEST_P(Claims, PlacementBalancesBetterThanReleasedFasterMoe) {
  const std::string k = GetParam();
  EXPECT_DOUBLE_EQ(Moe("fastermoe-released-top" + k).load_balance_ratio, 1.0);
  EXPECT_GT(BalanceGain("prophet-top" + k, "fastermoe-released-top" + k), 1.2);
  EXPECT_GT(BalanceGain("pro-prophet-top" + k, "fastermoe-released-top" + k), 1.2);
}

TEST_P(Claims, PaperFasterMoeShadowingBalancesBetterNotReproduced) {
  const std::string k = GetParam();
  EXPECT_LT(BalanceGain("prophet-top" + k, "fastermoe-top" + k), 1.0);
  EXPECT_LT(BalanceGain("pro-prophet-top" + k, "fastermoe-top" + k), 1.0);
}

INSTANTIATE_TEST_SUITE_P(TopK, Claims, ::testing::Values("1", "2"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           return "top" + p.param;
                         });

}  // namespace
}  // namespace stratasim
