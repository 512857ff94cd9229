// Stragglers (issue #23, core/stragglers.h) in simulated time, against closed forms:
// - one GPU slowed k-fold in a bulk-synchronous DDP run lengthens every iteration by
//   (k - 1) x its compute per iteration, since the all-reduce waits for it and it then runs its
//   optimizer step and next forward/backward last again;
// - a link or server straggler divides its NIC's bandwidth: a transfer's bandwidth term grows
//   k-fold, its latency does not;
// - random factors are a pure function of the seed, and differ across iterations; trace factors
//   apply to the tasks of their iteration.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "cli/run_scenario.h"
#include "core/compute_model.h"
#include "core/scenario.h"
#include "core/task_graph.h"
#include "sim/executor.h"
#include "strategies/plan.h"
#include "tests/test_clusters.h"

namespace stratasim {
namespace {

// Two servers of two GPUs; DDP without overlap, so that each iteration is compute then one
// all-reduce then the optimizer step; kernel launches cost nothing.
std::string Scenario4(const std::string& stragglers, const std::string& ddp_options = "") {
  return "name: straggle\ncluster:\n  servers:\n    - name: dgx\n      count: 2\n"
         "      gpu: A100-SXM4-80GB\n      gpus_per_server: 2\n"
         "      nvswitch: {bandwidth: \"300GB/s\", latency: \"1us\"}\n"
         "      nics: {count: 2, bandwidth: \"200Gb/s\", latency: \"2us\"}\n"
         "  network: {kind: single_switch, latency: \"1us\"}\n"
         "  stragglers: " +
         stragglers +
         "\nmodel: {kind: gpt, layers: 2, hidden: 512, heads: 8, sequence: 256, vocabulary: 4096}\n"
         "training: {global_batch: 16, micro_batch: 4, seed: 5, "
         "iterations: {warmup: 1, measured: 3}}\n"
         "simulation: {kernel_launch: \"0us\"}\n"
         "strategies:\n  - name: bsp\n    kind: ddp\n    options: {overlap: false" +
         ddp_options + "}\n";
}

// The scenario without stragglers, in full (not folded), so that its task ids are those of a
// run with stragglers (which never folds).
Scenario Calm() {
  Scenario s = LoadScenarioText(Scenario4("[]"), "t.yaml");
  s.simulation.fold = false;
  return s;
}

struct SimRun {
  Plan plan;
  ExecutionTrace trace;
  Metrics metrics;
};

SimRun Simulate(const Scenario& s, size_t strategy = 0) {
  const StrategySpec& spec = s.strategies.at(strategy);
  SimRun r;
  r.plan = PlanStrategy(s, spec);
  r.trace = sim::Simulate(r.plan.graph, ScenarioFor(s, spec).cluster, s.simulation);
  r.metrics = Evaluate(s, spec, r.plan.graph, r.trace, r.plan.samples_per_iteration,
                       r.plan.tokens_per_sample)
                  .metrics;
  return r;
}

// The modelled compute time of `rank` in `iteration` (core/compute_model.h), without stragglers.
double ComputeSeconds(const Scenario& s, const TaskGraph& g, int rank, int iteration) {
  double sum = 0;
  for (const Task& t : g.tasks()) {
    if (t.kind != TaskKind::kCompute || t.rank != rank || t.iteration != iteration) continue;
    sum += std::max(0.0, ComputeTaskSeconds(t, s.cluster.GpuOfRank(rank), s.simulation));
  }
  return sum;
}

TEST(Stragglers, OneSlowGpuLengthensTheBspIterationByItsExtraCompute) {
  const Scenario base = Calm();
  const SimRun calm = Simulate(base);
  for (double k : {1.5, 3.0}) {
    const Scenario s = LoadScenarioText(
        Scenario4("[{gpus: [3], level: compute, factor: " + std::to_string(k) + "}]"), "t.yaml");
    const SimRun slow = Simulate(s);
    const double extra_s = (k - 1) * ComputeSeconds(s, slow.plan.graph, 3, 1);
    ASSERT_GT(extra_s, 0);
    EXPECT_NEAR(slow.metrics.iteration_time_s - calm.metrics.iteration_time_s, extra_s,
                1e-6 * calm.metrics.iteration_time_s)
        << "k = " << k;
    ::testing::Test::RecordProperty("iteration_s_k" + std::to_string(k),
                                    std::to_string(slow.metrics.iteration_time_s));
  }
}

TEST(Stragglers, FoldingIsRefusedAndTheFastPathAgrees) {
  const std::string text = Scenario4("[{gpus: [1], level: compute, factor: 2}]");
  Scenario fast = LoadScenarioText(text, "t.yaml");
  Scenario plain = fast;
  plain.simulation.fold = plain.simulation.fuse = false;
  const SimRun a = Simulate(fast);
  const SimRun b = Simulate(plain);
  EXPECT_EQ(a.plan.fold, "full: stragglers break the symmetry of the replicas");
  // Fusion stays on in `fast`: chains of one rank's kernels carry its factor exactly.
  EXPECT_NEAR(a.metrics.iteration_time_s, b.metrics.iteration_time_s,
              1e-9 * b.metrics.iteration_time_s);
  // Without stragglers the same scenario folds (so the refusal above is theirs).
  EXPECT_EQ(Simulate(LoadScenarioText(Scenario4("[]"), "t.yaml")).plan.fold.rfind("folded", 0), 0u);
}

TEST(Stragglers, AStrategyWithStragglersOffRunsAsWithoutThem) {
  const std::string text = Scenario4("[{gpus: [3], level: compute, factor: 2}]") +
                           "  - name: calm\n    kind: ddp\n    options: {overlap: false}\n"
                           "    stragglers: off\n";
  const Scenario s = LoadScenarioText(text, "t.yaml");
  const SimRun slow = Simulate(s, 0);
  const SimRun calm = Simulate(s, 1);
  const SimRun none = Simulate(LoadScenarioText(Scenario4("[]"), "t.yaml"));  // folds, as calm
  EXPECT_EQ(calm.plan.fold, none.plan.fold);
  EXPECT_DOUBLE_EQ(calm.metrics.iteration_time_s, none.metrics.iteration_time_s);
  EXPECT_GT(slow.metrics.iteration_time_s, calm.metrics.iteration_time_s);
  // The plan notes list the active stragglers.
  bool listed = false;
  for (const std::string& n : slow.plan.notes) listed |= n == "straggler: GPUs 3 compute x2";
  EXPECT_TRUE(listed);
  for (const std::string& n : calm.plan.notes) EXPECT_EQ(n.find("straggler:"), std::string::npos);
}

// One transfer of `bytes` from `src` to `dst`; returns its duration.
double TransferSeconds(const ClusterSpec& c, int src, int dst, double bytes) {
  TaskGraph g(c.NumGpus());
  Task send, recv;
  send.stream = recv.stream = g.Stream("p2p");
  send.name = recv.name = "x";
  const TaskId r = g.AddTransfer(src, dst, bytes, send, recv).second;
  const ExecutionTrace t = sim::Simulate(g, c, SimulationSpec{});
  return t.records[r].end_s - t.records[r].start_s;
}

StragglerSpec Fixed(std::vector<int> ranks, StragglerLevel level, double factor) {
  StragglerSpec s;
  s.ranks = std::move(ranks);
  s.level = level;
  s.factor = factor;
  return s;
}

TEST(Stragglers, LinkAndServerFactorsDivideTheNicBandwidth) {
  const testing::NvSwitchOptions o = testing::NvSwitchLayout(2, 2, 2);
  const ClusterSpec calm = testing::NvSwitchCluster(o);
  const double bytes = 1e9, k = 4;
  const double base_s = TransferSeconds(calm, 0, 2, bytes);
  // Its bandwidth term: the rest is the route's latency (NIC, switch, NIC).
  const double latency_s = 2 * o.nic_latency_s + o.switch_latency_s;
  EXPECT_NEAR(base_s, latency_s + bytes / o.nic_Bps, 1e-9);

  ClusterSpec link = calm;
  link.stragglers.entries.push_back(Fixed({0}, StragglerLevel::kLink, k));
  // Out of GPU 0's NIC (up) and into it (down): both directions are slowed.
  EXPECT_NEAR(TransferSeconds(link, 0, 2, bytes), latency_s + k * bytes / o.nic_Bps, 1e-9);
  EXPECT_NEAR(TransferSeconds(link, 2, 0, bytes), latency_s + k * bytes / o.nic_Bps, 1e-9);
  // GPU 1 has a NIC of its own.
  EXPECT_NEAR(TransferSeconds(link, 1, 3, bytes), base_s, 1e-9);
  // A link straggler does not slow the GPU's traffic inside its server (NVSwitch).
  EXPECT_NEAR(TransferSeconds(link, 0, 1, bytes), TransferSeconds(calm, 0, 1, bytes), 1e-12);

  ClusterSpec server = calm;
  StragglerSpec s = Fixed({2, 3}, StragglerLevel::kServer, k);
  s.servers = {1};
  server.stragglers.entries.push_back(s);
  EXPECT_NEAR(TransferSeconds(server, 1, 3, bytes), latency_s + k * bytes / o.nic_Bps, 1e-9);
  EXPECT_NEAR(TransferSeconds(server, 0, 1, bytes), TransferSeconds(calm, 0, 1, bytes), 1e-12);
}

TEST(Stragglers, ServerFactorsSlowComputeToo) {
  const Scenario calm = Calm();
  const Scenario s =
      LoadScenarioText(Scenario4("[{servers: [1], level: server, factor: 2}]"), "t.yaml");
  const SimRun a = Simulate(calm);
  const SimRun b = Simulate(s);
  for (const Task& t : b.plan.graph.tasks()) {
    if (t.kind != TaskKind::kCompute) continue;
    const TraceRecord& ra = a.trace.records[t.id];
    const TraceRecord& rb = b.trace.records[t.id];
    const double factor = t.rank >= 2 ? 2.0 : 1.0;
    EXPECT_NEAR(rb.end_s - rb.start_s, factor * (ra.end_s - ra.start_s), 1e-12) << t.id;
  }
}

// Each compute task's duration over its calm duration, per (rank, iteration); checks that the
// ratio is one number per (rank, iteration).
std::map<std::pair<int, int>, double> Factors(const SimRun& calm, const SimRun& slow) {
  std::map<std::pair<int, int>, double> out;
  for (const Task& t : slow.plan.graph.tasks()) {
    if (t.kind != TaskKind::kCompute) continue;
    const double a = calm.trace.records[t.id].end_s - calm.trace.records[t.id].start_s;
    const double b = slow.trace.records[t.id].end_s - slow.trace.records[t.id].start_s;
    if (a <= 1e-9) continue;
    auto [it, fresh] = out.emplace(std::make_pair(t.rank, t.iteration), b / a);
    if (!fresh) {
      EXPECT_NEAR(it->second, b / a, 1e-6) << "task " << t.id;
    }
  }
  return out;
}

TEST(Stragglers, RandomFactorsAreSeededAndVaryPerIteration) {
  const std::string text =
      Scenario4("[{gpus: [2], level: compute, random: {distribution: uniform, min: 1.5, max: 3}}]");
  const Scenario s = LoadScenarioText(text, "t.yaml");
  const SimRun calm = Simulate(Calm());
  const SimRun a = Simulate(s);
  const SimRun b = Simulate(s);
  EXPECT_EQ(a.metrics.iteration_time_s, b.metrics.iteration_time_s);  // same seed, same run
  const auto factors = Factors(calm, a);
  std::set<double> rank2;
  for (const auto& [key, f] : factors) {
    if (key.first != 2) {
      EXPECT_NEAR(f, 1, 1e-6);
      continue;
    }
    EXPECT_NEAR(f, s.cluster.stragglers.SlowdownFactor(2, key.second, StragglerLevel::kCompute),
                1e-6);
    EXPECT_GE(f, 1.5 - 1e-6);
    EXPECT_LE(f, 3 + 1e-6);
    rank2.insert(f);
  }
  EXPECT_EQ(rank2.size(), 4u);  // 4 iterations, 4 different factors
  // Another seed draws other factors.
  std::string reseeded = text;
  reseeded.replace(reseeded.find("seed: 5"), 7, "seed: 6");
  const SimRun other = Simulate(LoadScenarioText(reseeded, "t.yaml"));
  EXPECT_NE(other.metrics.iteration_time_s, a.metrics.iteration_time_s);
}

TEST(Stragglers, TraceFactorsApplyToTheirIteration) {
  const std::string dir = (std::filesystem::path(::testing::TempDir()) / "stragglers_trace")
                              .lexically_normal()
                              .string();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/gpu0.csv") << "iteration,factor\n0,1.25\n2,2\n3,4\n";
  std::ofstream(dir + "/s.yaml") << Scenario4("[{gpus: [0], level: compute, trace: gpu0.csv}]");
  const Scenario s = LoadScenarioFile(dir + "/s.yaml");
  const SimRun calm = Simulate(Calm());
  const auto factors = Factors(calm, Simulate(s));
  const std::map<int, double> expected{{0, 1.25}, {1, 1}, {2, 2}, {3, 4}};
  for (const auto& [key, f] : factors) {
    EXPECT_NEAR(f, key.first == 0 ? expected.at(key.second) : 1.0, 1e-6)
        << "rank " << key.first << " iteration " << key.second;
  }
}

}  // namespace
}  // namespace stratasim
