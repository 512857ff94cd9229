#include "strategies/sharded/zero.h"

#include <gtest/gtest.h>

#include "core/metrics.h"
#include "models/gpt.h"
#include "models/workload.h"
#include "strategies/data/ddp.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

Scenario Small(int gpus, int global_batch, int micro_batch, int servers = 1) {
  return testing::TinyGptScenario({gpus / servers, servers, global_batch, micro_batch, 4, 4});
}

StrategySpec Spec(const std::string& kind, std::map<std::string, std::string> options = {}) {
  return testing::SpecOf(kind, kind, options);
}

ServerGroup Server(int gpus, int count) {
  testing::TinyGpt t;
  t.gpus_per_server = gpus;
  t.servers = count;
  return testing::TinyGptScenario(t).cluster.groups[0];
}

// Bytes each member sends per iteration, summed over collectives, as ring algorithms move
// them: reduce-scatter and all-gather (N-1)/N of the buffer, all-reduce 2(N-1)/N.
double BytesMovedPerRank(const TaskGraph& g) {
  double moved = 0;
  for (const Collective& c : g.collectives()) {
    const double n = static_cast<double>(c.ranks.size());
    const double f = c.kind == CollectiveKind::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n;
    moved += f * c.bytes;
  }
  return moved;
}

TEST(Zero, Stage3MovesOneAndAHalfTimesWhatDdpMoves) {
  const Scenario s = Small(8, 16, 2);  // one micro-batch per GPU
  const double ddp = BytesMovedPerRank(PlanDdp(s, Spec("ddp")).graph);
  const double psi = GptParameterCount(s.model);
  EXPECT_NEAR(ddp, 2 * psi * 2 * 7.0 / 8, 1e-6 * ddp);  // 2 Psi, BF16
  for (const std::string prefetch : {"true", "false"}) {
    const Plan z3 = PlanZero(s, Spec("zero3", {{"prefetch", prefetch}}));
    EXPECT_NEAR(BytesMovedPerRank(z3.graph) / ddp, 1.5, 1e-9);
  }
  EXPECT_NEAR(BytesMovedPerRank(PlanZero(s, Spec("zero3", {{"unit", "model"}})).graph) / ddp, 1.5,
              1e-9);
  EXPECT_NEAR(BytesMovedPerRank(PlanZero(s, Spec("zero1")).graph) / ddp, 1.0, 1e-9);
  EXPECT_NEAR(BytesMovedPerRank(PlanZero(s, Spec("zero2")).graph) / ddp, 1.0, 1e-9);
}

TEST(Zero, Stage3GathersEachLayerTwiceAndReduceScattersItOnce) {
  const Scenario s = Small(4, 8, 2);
  const Plan p = PlanZero(s, Spec("zero3"));
  const Workload w = BuildWorkload(s.model, 2, DType::kBF16);
  int gathers = 0, scatters = 0;
  for (const Collective& c : p.graph.collectives()) {
    EXPECT_EQ(c.ranks.size(), 4u);
    const std::string name = p.graph.task(c.members[0]).name.str();
    if (name.find("/layer1/") == std::string::npos) continue;
    EXPECT_NEAR(c.bytes, w.layers[2].params * 2, 1e-9);
    if (c.kind == CollectiveKind::kAllGather) ++gathers;
    if (c.kind == CollectiveKind::kReduceScatter) ++scatters;
  }
  EXPECT_EQ(gathers, 2);
  EXPECT_EQ(scatters, 1);
}

TEST(Zero, PrefetchIssuesTheNextGatherBeforeTheCurrentUnitComputes) {
  const Scenario s = Small(2, 4, 2);
  // The all-gather of layer1's forward waits for the end of the embedding's forward with
  // prefetch (so it overlaps layer0), for the end of layer0's without.
  for (const bool prefetch : {true, false}) {
    const Plan p = PlanZero(s, Spec("zero3", {{"prefetch", prefetch ? "true" : "false"}}));
    bool found = false;
    for (const Collective& c : p.graph.collectives()) {
      const Task& m = p.graph.task(c.members[0]);
      if (m.name != "it0/mb0/layer1/fwd/all_gather") continue;
      found = true;
      ASSERT_EQ(m.deps.size(), 1u);
      const std::string dep = p.graph.task(m.deps[0]).name.str();
      EXPECT_NE(dep.find(prefetch ? "embedding/" : "layer0/"), std::string::npos) << dep;
    }
    EXPECT_TRUE(found);
  }
}

double StateBytes(const Plan& p, int rank) {
  double sum = 0;
  for (const Task& t : p.graph.tasks()) {
    if (t.rank == rank && t.kind == TaskKind::kMemory &&
        (t.name == "weights" || t.name == "gradients" || t.name == "optimizer_states")) {
      sum += t.memory_delta_bytes;
    }
  }
  return sum;
}

// Replays the graph with one task per time step in graph order (see ddp_test.cpp).
ExecutionTrace SequentialTrace(const TaskGraph& g) {
  ExecutionTrace t;
  t.num_ranks = g.num_ranks();
  for (const Task& task : g.tasks()) {
    const double at = task.id;
    t.records.push_back(TraceRecord{task.id, task.rank, task.stream, at, at + 1, at});
  }
  return t;
}

TEST(Zero, ModelStatesPerGpuFollowZeroFigure1) {
  const Scenario s = Small(8, 16, 2);
  const double psi = GptParameterCount(s.model), n = 8;
  EXPECT_NEAR(StateBytes(PlanZero(s, Spec("zero1")), 3), 2 * psi + 2 * psi + 12 * psi / n, 1);
  EXPECT_NEAR(StateBytes(PlanZero(s, Spec("zero2")), 3), 2 * psi + 14 * psi / n, 1);
  EXPECT_NEAR(StateBytes(PlanZero(s, Spec("zero3")), 3), 16 * psi / n, 1);
  // Hybrid: 2 servers of 4, sharded over 4; unfolded, so that rank 5 has its own tasks.
  Scenario two = Small(8, 16, 2, 2);
  two.simulation.fold = false;
  EXPECT_NEAR(StateBytes(PlanZero(two, Spec("zero3", {{"shard_group", "server"}})), 5),
              16 * psi / 4, 1);

  MetricsInput in;
  in.measured_iterations = 1;
  double previous = 1e300;
  for (const std::string kind : {"ddp", "zero1", "zero2", "zero3"}) {
    const Plan p = kind == "ddp" ? PlanDdp(s, Spec(kind)) : PlanZero(s, Spec(kind));
    const Metrics m = ComputeMetrics(p.graph, SequentialTrace(p.graph), in);
    EXPECT_LT(m.peak_memory_bytes[0], previous) << kind;
    previous = m.peak_memory_bytes[0];
  }
}

TEST(Zero, HybridShardsInsideServersAndAllReducesShardsAcrossThem) {
  const Scenario s = Small(8, 16, 2, 2);
  const Plan p = PlanZero(s, Spec("zero3", {{"shard_group", "server"}}));
  const double psi = GptParameterCount(s.model);
  double cross = 0;
  for (const Collective& c : p.graph.collectives()) {
    if (c.kind == CollectiveKind::kAllReduce) {
      ASSERT_EQ(c.ranks.size(), 2u);
      EXPECT_EQ(c.ranks[1] - c.ranks[0], 4);  // same local index, other server
      cross += c.bytes;
    } else {
      ASSERT_EQ(c.ranks.size(), 4u);
      EXPECT_EQ(s.cluster.Locate(c.ranks.front()).server, s.cluster.Locate(c.ranks.back()).server);
    }
  }
  EXPECT_NEAR(cross, 4 * psi * 2 / 4, 1);  // each of 4 replica groups all-reduces its shard
  for (const std::string kind : {"zero1", "zero2"}) {
    const Plan q = PlanZero(s, Spec(kind, {{"shard_group", "server"}}));
    for (const Collective& c : q.graph.collectives()) {
      EXPECT_EQ(c.ranks.size(), c.kind == CollectiveKind::kAllReduce ? 2u : 4u);
    }
  }
}

TEST(Zero, GradientAccumulation) {
  const Scenario s = Small(2, 16, 2);  // 4 micro-batches
  const double psi = GptParameterCount(s.model);
  auto scattered = [&](const std::string& kind) {
    double b = 0;
    const Plan p = PlanZero(s, Spec(kind));
    for (const Collective& c : p.graph.collectives()) {
      if (c.kind == CollectiveKind::kReduceScatter) b += c.bytes;
    }
    return b;
  };
  EXPECT_NEAR(scattered("zero1"), 2 * psi, 1);      // once, after the last micro-batch
  EXPECT_NEAR(scattered("zero2"), 4 * 2 * psi, 1);  // every micro-batch
  EXPECT_NEAR(scattered("zero3"), 4 * 2 * psi, 1);
}

TEST(Zero, BadOptionsAreErrors) {
  const Scenario s = Small(2, 4, 2);
  try {
    PlanZero(s, Spec("zero3", {{"shard_group", "rack"}}));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "strategies[0].options.shard_group");
  }
  EXPECT_THROW(PlanZero(s, Spec("zero3", {{"unit", "op"}})), ConfigError);
  EXPECT_THROW(PlanZero(s, Spec("zero3", {{"prefetch", "maybe"}})), ConfigError);
  // bucket_size means nothing to zero3, unit nothing to zero1.
  EXPECT_THROW(PlanZero(s, Spec("zero3", {{"bucket_size", "1MB"}})), ConfigError);
  EXPECT_THROW(PlanZero(s, Spec("zero1", {{"unit", "layer"}})), ConfigError);
  EXPECT_THROW(PlanZero(s, Spec("zero4")), ConfigError);
  try {
    PlanZero(Small(4, 10, 2), Spec("zero2"));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("global_batch (10)"), std::string::npos) << e.what();
  }
  Scenario uneven = Small(4, 16, 2);
  uneven.cluster.groups.push_back(Server(2, 1));
  uneven.training.global_batch = 12;
  try {
    PlanZero(uneven, Spec("zero3", {{"shard_group", "server"}}));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("equal GPU counts"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stratasim
