// TriRace (strategies/pipeline/trirace.h) simulated: its stream priorities keep the
// point-to-point sends off links a lower class holds, checked from the trace; and the sparse
// embedding model's keys fail where they are written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/scenario.h"
#include "sim/executor.h"
#include "strategies/test_scenario.h"
#include "tests/simulated_strategy.h"
#include "tests/test_clusters.h"

namespace stratasim {
namespace {

// Four servers of one A100 each, joined by 2 GB/s NICs (a commodity 16 Gb/s network), so that
// every transfer leaves through a NIC: stage boundaries (replica 0: ranks 0 -> 1) and the
// data-parallel rings (stage 0: ranks 0 and 2) share NIC 0 in both directions.
Scenario FourServers() {
  Scenario s = testing::TinyGptScenario({1, 4, 16, 2, 4, 4});
  testing::NvSwitchOptions o = testing::NvSwitchLayout(4, 1, 1);
  o.nic_Bps = 2e9;
  s.cluster = testing::NvSwitchCluster(o);
  s.model.hidden = 512;
  s.model.heads = 8;
  s.model.sequence = 256;
  s.model.vocabulary = 20000;
  s.model.sparse_embedding = true;
  s.training.warmup_iterations = 1;
  s.training.measured_iterations = 2;
  s.training.seed = 5;
  s.simulation.kernel_launch_s = 0;
  s.strategies.push_back(
      testing::SpecOf("2bw", "pipeline", {{"stages", "2"}, {"schedule", "pipedream_2bw"}}));
  s.strategies.push_back(testing::SpecOf("trirace", "trirace", {{"stages", "2"}}));
  return s;
}

// The time of a transfer of `bytes` from `src` to `dst` alone on the cluster.
double Alone(const Scenario& s, int src, int dst, double bytes) {
  TaskGraph g(s.cluster.NumGpus());
  Task send, recv;
  send.stream = g.Stream("send");
  recv.stream = g.Stream("recv");
  const auto [id, unused] = g.AddTransfer(src, dst, bytes, send, recv);
  const ExecutionTrace t = sim::Simulate(g, s.cluster, s.simulation);
  return t.records[id].end_s - t.records[id].peers_joined_s;
}

struct SendTimes {
  int sends = 0;
  int free = 0;        // sends that started with no data-parallel traffic in flight on their ranks
  int free_exact = 0;  // of those, the ones that lasted their time alone
  double worst_free = 1;  // the largest duration / alone of a free send
  double excess_s = 0;    // summed over all sends: duration - alone
};

// Every point-to-point send of the run: its duration (from the rendezvous to its end) against
// its time alone, split by whether a data-parallel collective (dense or sparse) was in flight
// (from all members joined to its end) on either end's rank when it started.
SendTimes Sends(const Scenario& s, const testing::SimulatedStrategy& run) {
  const TaskGraph& g = run.plan.graph;
  std::vector<std::vector<std::pair<double, double>>> busy(g.num_ranks());
  for (const Task& t : g.tasks()) {
    if (t.kind != TaskKind::kCollective) continue;
    const TraceRecord& r = run.trace.records[t.id];
    busy[t.rank].push_back({r.peers_joined_s, r.end_s});
  }
  SendTimes out;
  std::map<std::tuple<int, int, double>, double> alone;
  for (const Task& t : g.tasks()) {
    if (t.kind != TaskKind::kSend || t.category != "pp") continue;
    const TraceRecord& r = run.trace.records[t.id];
    const double start = r.peers_joined_s, took = r.end_s - start;
    auto key = std::make_tuple(t.rank, t.peer, t.bytes);
    if (!alone.count(key)) alone[key] = Alone(s, t.rank, t.peer, t.bytes);
    const double solo = alone[key];
    ++out.sends;
    out.excess_s += took - solo;
    bool held = false;
    for (int rank : {t.rank, t.peer}) {
      for (const auto& [from, to] : busy[rank]) held = held || (from <= start && start < to);
    }
    if (held) continue;
    ++out.free;
    out.worst_free = std::max(out.worst_free, took / solo);
    if (std::abs(took - solo) <= 1e-9 * solo + 1e-12) ++out.free_exact;
  }
  return out;
}

TEST(TriRaceSimulated, PointToPointSendsDoNotShareLinksWithCollectivesStartedAfterThem) {
  const Scenario s = FourServers();
  const testing::SimulatedStrategy tri = testing::Simulated(s, "trirace");
  const testing::SimulatedStrategy plain = testing::Simulated(s, "2bw");
  const SendTimes t = Sends(s, tri), p = Sends(s, plain);
  ASSERT_GT(t.sends, 0);
  ASSERT_EQ(t.sends, p.sends);
  // TriRace: a send that found its ranks free of data-parallel traffic keeps its links to
  // itself to the end (the gate holds every dense or sparse member that would start meanwhile),
  // so it lasts exactly its time alone.
  EXPECT_GT(t.free, 0);
  EXPECT_EQ(t.free_exact, t.free) << "worst " << t.worst_free;
  // Plain PipeDream-2BW: all-reduce buckets start during such sends and share NIC 0 with them.
  EXPECT_GT(p.worst_free, 1.2);
  EXPECT_LT(p.free_exact, p.free);
  // Not asserted: over all sends, TriRace loses more time to sharing here (the gate does not
  // preempt, and the deferred all-reduce runs during the next batch's sends), which the run
  // prints and docs/strategies.md reports.
  std::printf(
      "sends %d: trirace free %d (exact %d), excess %.3g ms; 2bw free %d (exact %d, worst "
      "%.2fx), excess %.3g ms\n",
      t.sends, t.free, t.free_exact, t.excess_s * 1e3, p.free, p.free_exact, p.worst_free,
      p.excess_s * 1e3);
}

TEST(TriRaceSimulated, FasterThanPipeDream2BwOnASparseEmbeddingModel) {
  const Scenario s = FourServers();
  const double tri = testing::Simulated(s, "trirace").metrics.iteration_time_s;
  const double plain = testing::Simulated(s, "2bw").metrics.iteration_time_s;
  EXPECT_LT(tri, plain);
  std::printf("iteration: trirace %.4g ms, 2bw %.4g ms (%.2fx)\n", tri * 1e3, plain * 1e3,
              plain / tri);
}

// A scenario whose model has the extra `lines` (indented by two spaces) at line 12.
std::string WithModelLines(const std::string& lines) {
  return "name: t\n"
         "cluster:\n"
         "  servers:\n"
         "    - {name: s, gpu: A100-SXM4-80GB, gpus_per_server: 1}\n"
         "model:\n"
         "  kind: gpt\n"
         "  layers: 2\n"
         "  hidden: 64\n"
         "  heads: 4\n"
         "  sequence: 32\n"
         "  vocabulary: 1000\n" +
         lines +
         "training: {global_batch: 8, micro_batch: 1}\n"
         "strategies:\n"
         "  - {name: t, kind: ddp}\n";
}

std::string LoadError(const std::string& lines) {
  try {
    LoadScenarioText(WithModelLines(lines), "t.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SparseEmbeddingModel, KeysLoadAndBadValuesFailWhereWritten) {
  const Scenario s = LoadScenarioText(
      WithModelLines("  sparse_embedding: true\n  zipf_exponent: 1.1\n"), "t.yaml");
  EXPECT_TRUE(s.model.sparse_embedding);
  EXPECT_EQ(s.model.token_distribution, "zipf");
  EXPECT_DOUBLE_EQ(s.model.zipf_exponent, 1.1);
  EXPECT_EQ(LoadError("  sparse_embedding: maybe\n"),
            "t.yaml:12:21: model.sparse_embedding = \"maybe\": must be true or false");
  EXPECT_EQ(LoadError("  token_distribution: uniform\n"),
            "t.yaml:12:23: model.token_distribution = \"uniform\": only applies with "
            "sparse_embedding: true");
  EXPECT_EQ(LoadError("  zipf_exponent: 1\n"),
            "t.yaml:12:18: model.zipf_exponent = \"1\": only applies with sparse_embedding: true");
  EXPECT_EQ(LoadError("  sparse_embedding: true\n  token_distribution: pareto\n"),
            "t.yaml:13:23: model.token_distribution = \"pareto\": must be one of: zipf, uniform");
  EXPECT_EQ(LoadError("  sparse_embedding: true\n  zipf_exponent: 0\n"),
            "t.yaml:13:18: model.zipf_exponent = \"0\": must be a number greater than 0");
  EXPECT_EQ(LoadError("  sparse_embedding: true\n  zipf_exponent: 9\n"),
            "t.yaml:13:18: model.zipf_exponent = \"9\": must be <= 8");
  EXPECT_EQ(LoadError("  sparse_embedding: true\n  token_distribution: uniform\n"
                      "  zipf_exponent: 1\n"),
            "t.yaml:14:18: model.zipf_exponent = \"1\": only applies with token_distribution: "
            "zipf");
  // Only kind gpt has a sparse embedding.
  EXPECT_NE(LoadError("  sparse_embedding: true\n").find("no error"), std::string::npos);
  const std::string llama = WithModelLines("  sparse_embedding: true\n");
  std::string text = llama;
  text.replace(text.find("kind: gpt"), 9, "kind: llama");
  try {
    LoadScenarioText(text, "t.yaml");
    ADD_FAILURE() << "llama took sparse_embedding";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.sparse_embedding"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stratasim
