// Folding and fusion (docs/scale.md) are optimisations, not models: each scenario here runs
// the plain path (simulation.fold and simulation.fuse off) and the fast one, and the figures
// must agree to 0.5% (they agree to rounding where the transformation is exact). Folding must
// also refuse, and say why, where replicas are not provably identical.
#include <gtest/gtest.h>

#include <cmath>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "sim/executor.h"
#include "strategies/plan.h"

namespace stratasim {
namespace {

std::string Cluster(int servers, const std::string& network) {
  return "name: fold\ncluster:\n  servers:\n    - name: dgx\n      count: " +
         std::to_string(servers) +
         "\n      gpu: A100-SXM4-80GB\n      gpus_per_server: 8\n"
         "      nvswitch: {bandwidth: \"300GB/s\", latency: \"1us\"}\n"
         "      nics: {count: 8, bandwidth: \"200Gb/s\", latency: \"2us\"}\n"
         "  network: " +
         network + "\n";
}

const char kModel[] =
    "model: {kind: gpt, layers: 8, hidden: 1024, heads: 16, sequence: 1024, vocabulary: 8192}\n"
    "training: {global_batch: 64, micro_batch: 2, precision: bf16, "
    "iterations: {warmup: 1, measured: 1}}\n";

struct Outcome {
  Metrics metrics;
  std::string fold;
  long long tasks = 0;
  long long activities = 0;
};

Outcome Simulate1(const std::string& text, bool fast) {
  Scenario s = LoadScenarioText(text, "fold.yaml");
  s.simulation.fold = s.simulation.fuse = fast;
  const StrategySpec& spec = s.strategies.at(0);
  const Plan plan = PlanStrategy(s, spec);
  const ExecutionTrace trace = sim::Simulate(plan.graph, s.cluster, s.simulation);
  Outcome o;
  o.metrics =
      Evaluate(s, spec, plan.graph, trace, plan.samples_per_iteration, plan.tokens_per_sample)
          .metrics;
  o.fold = plan.fold;
  o.tasks = static_cast<long long>(plan.graph.tasks().size());
  o.activities = trace.activities;
  return o;
}

double MaxPeak(const Metrics& m) {
  double peak = 0;
  for (double p : m.peak_memory_bytes) peak = std::max(peak, p);
  return peak;
}

// Full and fast agree within 0.5% on every figure the issue names; returns the fast outcome.
Outcome ExpectSame(const std::string& text) {
  const Outcome full = Simulate1(text, false);
  const Outcome fast = Simulate1(text, true);
  const Metrics& a = full.metrics;
  const Metrics& b = fast.metrics;
  EXPECT_NEAR(b.iteration_time_s, a.iteration_time_s, 0.005 * a.iteration_time_s);
  // Fractions of the iteration: 0.5% of the iteration, as absolute fractions.
  EXPECT_NEAR(b.exposed_comm_fraction, a.exposed_comm_fraction, 0.005);
  EXPECT_NEAR(b.idle_fraction, a.idle_fraction, 0.005);
  EXPECT_NEAR(MaxPeak(b), MaxPeak(a), 0.005 * MaxPeak(a));
  EXPECT_EQ(a.peak_memory_bytes.size(), b.peak_memory_bytes.size());
  for (size_t r = 0; r < std::min(a.peak_memory_bytes.size(), b.peak_memory_bytes.size()); ++r) {
    EXPECT_NEAR(b.peak_memory_bytes[r], a.peak_memory_bytes[r], 0.005 * a.peak_memory_bytes[r])
        << "rank " << r;
  }
  EXPECT_NEAR(b.mfu, a.mfu, 0.005 * a.mfu);
  ::testing::Test::RecordProperty("full_iteration_s", std::to_string(a.iteration_time_s));
  ::testing::Test::RecordProperty("fast_iteration_s", std::to_string(b.iteration_time_s));
  EXPECT_LT(fast.activities, full.activities);
  return fast;
}

TEST(FoldExactness, ThreeDOnRailOptimized) {
  const Outcome o = ExpectSame(
      Cluster(4, "{kind: rail_optimized, latency: \"1us\"}") + kModel +
      "strategies:\n  - {name: 3d, kind: 3d, options: {tensor: 4, stages: 2, data: 4}}\n");
  EXPECT_EQ(o.fold, "folded: 4 blocks of 1 replica(s) (8 GPUs) simulated as 1");
}

TEST(FoldExactness, InterleavedPipelineAcrossServers) {
  // Replicas of 16 GPUs: each pipeline send crosses servers, so the folded replica keeps
  // mirrors of them on the NICs the data-parallel all-reduces use.
  const Outcome o =
      ExpectSame(Cluster(4, "{kind: rail_optimized, latency: \"1us\"}") + kModel +
                 "strategies:\n  - {name: pp, kind: pipeline, options: {stages: 4, tensor: 4, "
                 "schedule: interleaved, virtual_stages: 2}}\n");
  EXPECT_EQ(o.fold, "folded: 2 blocks of 1 replica(s) (16 GPUs) simulated as 1");
}

TEST(FoldExactness, DataParallelOnOversubscribedLeafSpine) {
  // Pure data parallelism as a 3d plan (8 replicas of one GPU fill a server) and as ddp, on
  // leaves of two servers with 2:1 uplinks: the all-reduces contend on the uplinks in both.
  const std::string net = "{kind: leaf_spine, servers_per_leaf: 2, oversubscription: 2}";
  const Outcome dp = ExpectSame(
      Cluster(4, net) + kModel +
      "strategies:\n  - {name: dp, kind: 3d, options: {tensor: 1, stages: 1, data: 32}}\n");
  EXPECT_EQ(dp.fold, "folded: 4 blocks of 8 replica(s) (8 GPUs) simulated as 1");
  const Outcome ddp =
      ExpectSame(Cluster(4, net) + kModel + "strategies:\n  - {name: ddp, kind: ddp}\n");
  EXPECT_EQ(ddp.fold, "folded: 4 blocks of 8 replica(s) (8 GPUs) simulated as 1");
}

TEST(FoldExactness, TensorWithSequenceParallelism) {
  const Outcome o = ExpectSame(
      Cluster(2, "{kind: single_switch, latency: \"1us\"}") + kModel +
      "strategies:\n  - {name: tp, kind: tensor, options: {degree: 4, sequence_parallel: true}}\n");
  EXPECT_EQ(o.fold, "folded: 2 blocks of 2 replica(s) (8 GPUs) simulated as 1");
}

TEST(FoldExactness, ZeroThree) {
  const Outcome o = ExpectSame(Cluster(2, "{kind: single_switch, latency: \"1us\"}") + kModel +
                               "strategies:\n  - {name: z, kind: zero3}\n");
  EXPECT_EQ(o.fold, "folded: 2 blocks of 8 replica(s) (8 GPUs) simulated as 1");
}

TEST(FoldExactness, HybridZeroTwoShardedPerServer) {
  // Shard groups inside servers (left out for the folded server), replica all-reduces across.
  const Outcome o =
      ExpectSame(Cluster(2, "{kind: single_switch, latency: \"1us\"}") + kModel +
                 "strategies:\n  - {name: z, kind: zero2, options: {shard_group: server}}\n");
  EXPECT_EQ(o.fold, "folded: 2 blocks of 8 replica(s) (8 GPUs) simulated as 1");
}

TEST(FoldExactness, FoldingShrinksTheGraph) {
  const std::string text = Cluster(4, "{kind: rail_optimized}") + kModel +
                           "strategies:\n  - {name: 3d, kind: 3d, options: {tensor: 8, "
                           "stages: 1, data: 4}}\n";
  const Outcome full = Simulate1(text, false);
  const Outcome fast = Simulate1(text, true);
  // One of four servers' compute is planned; the other three keep only data-parallel members.
  EXPECT_LT(fast.tasks * 3, full.tasks);
}

TEST(FoldRefuses, HeterogeneousCluster) {
  const std::string text =
      "name: h\ncluster:\n  servers:\n"
      "    - {name: a, count: 1, gpu: A100-SXM4-80GB, gpus_per_server: 8,\n"
      "       nvswitch: {bandwidth: \"300GB/s\"}, nics: {count: 8, bandwidth: \"200Gb/s\"}}\n"
      "    - {name: v, count: 1, gpu: V100-SXM2, gpus_per_server: 8,\n"
      "       nvswitch: {bandwidth: \"150GB/s\"}, nics: {count: 8, bandwidth: \"100Gb/s\"}}\n"
      "  network: {kind: single_switch}\n"
      "model: {kind: gpt, layers: 8, hidden: 1024, heads: 16, sequence: 1024, vocabulary: 8192}\n"
      "training: {global_batch: 64, micro_batch: 2, precision: fp16}\n"
      "strategies:\n  - {name: 3d, kind: 3d, options: {tensor: 8, stages: 1, data: 2}}\n";
  EXPECT_EQ(Simulate1(text, true).fold,
            "full: the cluster has 2 server groups, which may differ in GPUs or links");
}

TEST(FoldRefuses, AsymmetricPlacement) {
  // Rank order dpt puts the replicas' GPUs side by side in every server.
  const Outcome o = Simulate1(
      Cluster(4, "{kind: rail_optimized}") + kModel +
          "strategies:\n  - {name: 3d, kind: 3d, options: {tensor: 4, stages: 2, data: 4, "
          "rank_order: dpt}}\n",
      true);
  EXPECT_EQ(o.fold, "full: rank order dpt interleaves the replicas");
}

TEST(FoldRefuses, MixtureOfExperts) {
  const std::string text =
      Cluster(2, "{kind: single_switch}") +
      "model: {kind: moe, layers: 2, hidden: 512, heads: 8, sequence: 256, vocabulary: 1000, "
      "experts: 16}\n"
      "training: {global_batch: 16, micro_batch: 1, iterations: {warmup: 0, measured: 1}}\n"
      "strategies:\n  - {name: m, kind: deepspeed-moe}\n";
  EXPECT_EQ(Simulate1(text, true).fold, "full: MoE routing differs per GPU");
}

TEST(FoldRefuses, TheReportSaysWhy) {
  const Scenario s = LoadScenarioText(
      Cluster(4, "{kind: rail_optimized}") + kModel +
          "strategies:\n  - {name: 3d, kind: 3d, options: {tensor: 4, stages: 2, data: 4, "
          "rank_order: dpt}}\n  - {name: ok, kind: 3d, options: {tensor: 4, stages: 2, data: 4}}\n",
      "fold.yaml");
  const std::vector<StrategyRun> runs = RunStrategies(s, {});
  ASSERT_EQ(runs.size(), 2u);
  const auto has_note = [](const StrategyResult& r, const std::string& note) {
    return std::find(r.notes.begin(), r.notes.end(), note) != r.notes.end();
  };
  EXPECT_TRUE(
      has_note(runs[0].result, "simulated in full: rank order dpt interleaves the replicas"));
  EXPECT_EQ(runs[0].result.fold, "full: rank order dpt interleaves the replicas");
  EXPECT_TRUE(has_note(runs[1].result, "folded: 4 blocks of 1 replica(s) (8 GPUs) simulated as 1"));
  EXPECT_GT(runs[1].result.tasks, 0);
  EXPECT_GT(runs[1].result.fused_tasks, 0);
}

// The ConfigError RunStrategies throws for `s`.
ConfigError RefusalOf(const Scenario& s, const RunOptions& options = {}) {
  try {
    RunStrategies(s, {}, options);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no refusal";
  return ConfigError(SourceLocation{}, "", "", "");
}

TEST(TaskBudget, APlanPastMaxTasksIsRefusedWithAdvice) {
  const Scenario s = LoadScenarioText(
      Cluster(4, "{kind: rail_optimized}") +
          "model: {kind: gpt, layers: 8, hidden: 1024, heads: 16, sequence: 1024, "
          "vocabulary: 8192}\n"
          "training: {global_batch: 64, micro_batch: 2}\n"
          "simulation: {max_tasks: 2000, fold: off}\n"
          "strategies:\n  - {name: small, kind: 3d, options: {tensor: 8, stages: 1, data: 4}}\n"
          "  - {name: big, kind: 3d, options: {tensor: 4, stages: 2, data: 4}}\n",
      "budget.yaml");
  // Refused before any simulation, located at the strategy, with what would help.
  const ConfigError e = RefusalOf(s);
  EXPECT_EQ(e.where().file, "budget.yaml");
  EXPECT_EQ(e.where().line, 15);
  EXPECT_EQ(e.key(), "strategies[0]");
  EXPECT_EQ(e.rule(),
            "the plan needs more than 2000 tasks in 1 iteration, over simulation.max_tasks "
            "(2000). What would help: simulation.fold: auto (simulates one block of identical "
            "replicas); fewer iterations (training.iterations, now 1 warm-up + 2 measured); "
            "fewer micro-batches (a smaller global_batch or a larger micro_batch); fewer layers "
            "(docs/limits.md)");
}

TEST(TaskBudget, TheEstimateRefusesBeforeTheWholeGraphIsBuilt) {
  auto scenario = [](long long max, int measured) {
    return LoadScenarioText(
        Cluster(4, "{kind: rail_optimized}") +
            "model: {kind: gpt, layers: 8, hidden: 1024, heads: 16, sequence: 1024, "
            "vocabulary: 8192}\n"
            "training: {global_batch: 64, micro_batch: 2, precision: bf16, "
            "iterations: {warmup: 1, measured: " +
            std::to_string(measured) + "}}\nsimulation: {max_tasks: " + std::to_string(max) +
            "}\nstrategies:\n  - {name: a, kind: 3d, options: {tensor: 8, stages: 1, data: 4}}\n",
        "budget.yaml");
  };
  const long long two = RunStrategies(scenario(100000000, 1), {})[0].result.tasks;
  ASSERT_GT(two, 0);
  // Two iterations fit; a run of 10, planned whole, does not: refused on the estimate.
  const ConfigError whole = RefusalOf(scenario(two + 100, 9), WholeRuns());
  EXPECT_EQ(whole.rule().rfind("the plan needs about ", 0), 0u) << whole.what();
  EXPECT_NE(whole.rule().find(" per iteration x 10 iterations), over simulation.max_tasks"),
            std::string::npos)
      << whole.what();
  // Streamed, the run holds three iterations at most: refused too, on that estimate.
  const ConfigError streamed = RefusalOf(scenario(two + 100, 9));
  EXPECT_NE(streamed.rule().find(" per iteration x 3 iterations held at once), over"),
            std::string::npos)
      << streamed.what();
  // With room for three it runs all ten.
  const std::vector<StrategyRun> runs = RunStrategies(scenario(2 * two, 9), {});
  ASSERT_TRUE(runs[0].result.ok) << runs[0].result.error;
  EXPECT_GT(runs[0].result.tasks, 4 * two);
}

TEST(TaskBudget, MixtureOfExpertsPlansTakeTheLimitToo) {
  const Scenario s = LoadScenarioText(
      Cluster(2, "{kind: single_switch}") +
          "model: {kind: moe, layers: 2, hidden: 512, heads: 8, sequence: 256, vocabulary: 1000, "
          "experts: 16}\n"
          "training: {global_batch: 16, micro_batch: 1, iterations: {warmup: 0, measured: 1}}\n"
          "simulation: {max_tasks: 50}\n"
          "strategies:\n  - {name: m, kind: deepspeed-moe}\n",
      "moe.yaml");
  const ConfigError e = RefusalOf(s);
  EXPECT_EQ(e.rule().rfind("the plan needs more than 50 tasks in 1 iteration, over", 0), 0u)
      << e.what();
}

TEST(TaskBudget, SharedAcrossStrategies) {
  const std::string text =
      Cluster(4, "{kind: rail_optimized}") + kModel +
      "simulation: {max_tasks: MAX}\n"
      "strategies:\n  - {name: a, kind: 3d, options: {tensor: 8, stages: 1, data: 4}}\n"
      "  - {name: b, kind: 3d, options: {tensor: 8, stages: 1, data: 4}}\n";
  auto scenario = [&](long long max) {
    std::string t = text;
    t.replace(t.find("MAX"), 3, std::to_string(max));
    return LoadScenarioText(t, "budget.yaml");
  };
  // Plans simulated whole are all held here until the outputs are written.
  const long long one = RunStrategies(scenario(100000000), {}, WholeRuns())[0].result.tasks;
  ASSERT_GT(one, 0);
  const std::vector<StrategyRun> both = RunStrategies(scenario(2 * one), {}, WholeRuns());
  EXPECT_TRUE(both[0].result.ok && both[1].result.ok);
  // Whatever the first plan used, the second cannot have.
  const ConfigError e = RefusalOf(scenario(2 * one - 1), WholeRuns());
  EXPECT_EQ(e.key(), "strategies[1]");
  // The whole run's plan hit the limit, not one iteration's.
  EXPECT_EQ(e.rule().rfind("the plan needs more than " + std::to_string(one - 1) +
                               " tasks, over simulation.max_tasks",
                           0),
            0u)
      << e.what();
}

}  // namespace
}  // namespace stratasim
