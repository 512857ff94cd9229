// The search's analytic estimate (search/analytic.h) against the simulation with contention:
// plans of a small GPT on two DGX-A100-like servers (16 GPUs) over data, tensor and pipeline
// degrees, the three schedules, recomputation, sequence parallelism, ZeRO-1 and the
// distributed optimizer, each simulated as `stratasim run` would (RunStrategies) and estimated.
// Each estimate must lie within a band of the simulated iteration time, and the plan the
// estimate ranks first must be the simulated best or within a few percent of it.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "search/analytic.h"
#include "search/candidate.h"

namespace stratasim {
namespace {

using search::Candidate;
using search::Estimate;
using search::Zero;

const char kScenario[] = R"(
name: analytic
cluster:
  servers:
    - name: dgx
      count: 2
      gpu: A100-SXM4-80GB
      gpus_per_server: 8
      nvswitch: {bandwidth: "300GB/s", latency: "1us"}
      nics: {count: 8, bandwidth: "200Gb/s", latency: "2us"}
  network: {kind: rail_optimized, latency: "1us"}
model: {kind: gpt, layers: 8, hidden: 1024, heads: 16, sequence: 1024, vocabulary: 51200}
training:
  global_batch: 32
  micro_batch: 1
  precision: bf16
  iterations: {warmup: 0, measured: 1}
strategies:
  - {name: placeholder, kind: ddp}
)";

Candidate Plan(int t, int p, int d, const std::string& schedule, int v = 1,
               Recompute recompute = Recompute::kNone, bool sp = false, Zero zero = Zero::kNone) {
  Candidate c;
  c.tensor = t;
  c.pipeline = p;
  c.data = d;
  c.micro_batches = 32 / d;
  c.schedule = schedule;
  c.virtual_stages = v;
  c.recompute = recompute;
  c.sequence_parallel = sp;
  c.zero = zero;
  return c;
}

Candidate Ordered(Candidate c, const std::string& order) {
  c.rank_order = order;
  return c;
}

std::vector<Candidate> Plans() {
  return {
      Plan(1, 1, 16, ""),
      Plan(1, 1, 16, "", 1, Recompute::kNone, false, Zero::kZero1),
      Plan(2, 2, 4, "1f1b"),
      Plan(2, 2, 4, "1f1b", 1, Recompute::kNone, false, Zero::kDistributedOptimizer),
      Plan(4, 2, 2, "1f1b", 1, Recompute::kSelective, true),
      Plan(2, 4, 2, "interleaved", 2),
      Plan(8, 1, 2, "", 1, Recompute::kFull),
      Plan(1, 4, 4, "gpipe", 1, Recompute::kSelective),
      Plan(2, 8, 1, "1f1b"),
      Plan(1, 2, 8, "interleaved", 2, Recompute::kFull),
      Plan(1, 1, 16, "", 1, Recompute::kNone, false, Zero::kZero2),
      Plan(1, 1, 16, "", 1, Recompute::kSelective, false, Zero::kZero3),
      // Replicas fastest: each tensor group spans both servers (its all-reduces cross the NICs).
      Ordered(Plan(2, 2, 4, "1f1b"), "dpt"),
  };
}

TEST(AnalyticEstimate, TracksTheSimulationAndPicksItsBestPlan) {
  Scenario s = LoadScenarioText(kScenario, "analytic.yaml");
  const std::vector<Candidate> plans = Plans();
  s.strategies.clear();
  for (size_t i = 0; i < plans.size(); ++i) {
    s.strategies.push_back(
        search::ToStrategySpec(plans[i], "strategies[" + std::to_string(i) + "]"));
  }
  const std::vector<StrategyRun> runs = RunStrategies(s, {});
  ASSERT_EQ(runs.size(), plans.size());
  search::Estimator estimate(s);
  size_t best_simulated = 0, best_estimated = 0;
  std::vector<double> simulated(plans.size()), estimated(plans.size());
  for (size_t i = 0; i < plans.size(); ++i) {
    ASSERT_TRUE(runs[i].result.ok) << runs[i].result.name << ": " << runs[i].result.error;
    const Metrics& m = runs[i].result.metrics;
    const Estimate e = estimate(plans[i]);
    simulated[i] = m.iteration_time_s;
    estimated[i] = e.iteration_s;
    auto sim_exposed = [&](const std::string& category) {
      const auto it = m.exposed_comm_by_category.find(category);
      return it == m.exposed_comm_by_category.end() ? 0.0 : it->second * m.iteration_time_s;
    };
    std::printf(
        "%-30s simulated %8.3f ms  estimated %8.3f ms  ratio %.3f\n"
        "%30s   exposed ms simulated / estimated: tp %.3f / %.3f, pp %.3f / %.3f, dp %.3f / "
        "%.3f; idle (bubble) %.3f / %.3f\n",
        search::CandidateName(plans[i]).c_str(), 1e3 * simulated[i], 1e3 * estimated[i],
        estimated[i] / simulated[i], "", 1e3 * sim_exposed("tp"), 1e3 * e.exposed_comm_s.at("tp"),
        1e3 * sim_exposed("pp"), 1e3 * e.exposed_comm_s.at("pp"), 1e3 * sim_exposed("dp"),
        1e3 * e.exposed_comm_s.at("dp"), 1e3 * m.idle_fraction * m.iteration_time_s,
        1e3 * e.bubble_s);
    // The model FLOPs are the simulator's count exactly (the same kernels).
    EXPECT_NEAR(e.model_flops, m.model_flops_per_iteration, 1e-9 * m.model_flops_per_iteration)
        << runs[i].result.name;
    EXPECT_NEAR(e.mfu * e.iteration_s, m.mfu * m.iteration_time_s, 1e-9 * m.mfu)
        << runs[i].result.name;
    if (simulated[i] < simulated[best_simulated]) best_simulated = i;
    if (estimated[i] < estimated[best_estimated]) best_estimated = i;
  }
  // Measured (13 plans): estimate / simulated from 0.956 to 1.059. What remains is (a) the
  // tuner's alpha-beta price of cross-server collectives, above what their simulation takes
  // (+1.6% to +3.2% on DDP, ZeRO and the t2-p2 plans' data-parallel reductions, +5.9% with the
  // tensor groups across the servers, rank order dpt), and (b) the interleaved schedule's fill
  // and drain over unequal chunks (-4.4%, +2.0%). 7% leaves room for those and still fails a
  // missing term: the t2-p8 bubble is 10% of its iteration, the t8 plan's tensor-parallel time
  // 48%, the dpt plan's 44%.
  for (size_t i = 0; i < plans.size(); ++i) {
    EXPECT_NEAR(estimated[i] / simulated[i], 1.0, 0.07) << runs[i].result.name;
  }
  // Measured: the estimate ranks ZeRO-3 first (0.4% ahead of ZeRO-1/2 in the estimate), whose
  // simulated time is 3.1% above the simulated best (ZeRO-1): plans that close are what the
  // search's top-K simulation separates.
  EXPECT_LE(simulated[best_estimated], 1.05 * simulated[best_simulated])
      << "estimated best " << runs[best_estimated].result.name << ", simulated best "
      << runs[best_simulated].result.name;
}

}  // namespace
}  // namespace stratasim
