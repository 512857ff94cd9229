#include "strategies/pipeline/trirace.h"

#include <gtest/gtest.h>

#include <string>

#include "models/token_distribution.h"
#include "models/workload.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

// A GPT of 4 layers (hidden 256, sequence 128) with a sparse embedding over a 20,000-token
// vocabulary, on 4 GPUs of one NVSwitch server; 2 measured iterations after 1 warm-up.
Scenario SparseGpt(int gpus = 4, int global_batch = 8) {
  Scenario s = testing::TinyGptScenario({gpus, 1, global_batch, 1, 4, 4});
  s.model.vocabulary = 20000;
  s.model.sparse_embedding = true;
  s.training.warmup_iterations = 1;
  s.training.measured_iterations = 2;
  s.training.seed = 42;
  return s;
}

StrategySpec Spec(std::map<std::string, std::string> options) {
  return testing::SpecOf("tr", "trirace", options);
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

TEST(TriRace, BadOptionsFailAtTheOption) {
  const Scenario s = SparseGpt();
  EXPECT_EQ(
      testing::PlanErrorOf(s, Spec({{"stages", "3"}})),
      "s.yaml:9:5: strategies[0].options.stages = \"3\": stages (3) must divide the GPU count (4)");
  EXPECT_EQ(
      testing::PlanErrorOf(s, Spec({{"stages", "2"}, {"data", "3"}})),
      "s.yaml:9:5: strategies[0].options.data = \"3\": stages (2) x data (3) must equal the GPU "
      "count (4)");
  EXPECT_EQ(testing::PlanErrorOf(s, Spec({{"stages", "2"}, {"micro_batches", "1"}})),
            "s.yaml:9:5: strategies[0].options.micro_batches = \"1\": micro_batches (1) must be >= "
            "stages (2): PipeDream-2BW's one-version delay, which the deferred all-reduce uses, "
            "needs each batch to fill the pipeline (Narayanan et al. 2021, ICML, §3.1)");
  Scenario dense = s;
  dense.model.sparse_embedding = false;
  EXPECT_EQ(testing::PlanErrorOf(dense, Spec({{"stages", "2"}, {"sparse_exchange", "true"}})),
            "s.yaml:9:5: strategies[0].options.sparse_exchange = \"true\": needs a model with "
            "sparse_embedding: true (a gpt model key, docs/models.md, \"Sparse embedding\")");
  EXPECT_NE(
      testing::PlanErrorOf(s, Spec({{"stages", "2"}, {"index_bytes", "3"}})).find("index_bytes"),
      std::string::npos);
  // Left at its default, sparse_exchange is simply off for a dense model.
  EXPECT_EQ(testing::PlanErrorOf(dense, Spec({{"stages", "2"}})), "no error");
}

TEST(TriRace, StreamsCarryTheClassesPriorities) {
  const Plan plan = PlanStrategy(SparseGpt(), Spec({{"stages", "2"}}));
  const TaskGraph& g = plan.graph;
  auto priority = [&](const std::string& name) {
    for (size_t i = 0; i < g.streams().size(); ++i) {
      if (g.streams()[i] == name) return g.stream_priority(static_cast<int>(i));
    }
    ADD_FAILURE() << "no stream " << name;
    return -1;
  };
  for (const char* p2p : {"p2p_fwd_send", "p2p_fwd_recv", "p2p_bwd_send", "p2p_bwd_recv"}) {
    EXPECT_EQ(priority(p2p), 2) << p2p;
  }
  EXPECT_EQ(priority("sparse"), 1);
  EXPECT_EQ(priority("dp"), 0);
  // Plain PipeDream-2BW has none.
  const Plan plain = PlanStrategy(
      SparseGpt(),
      testing::SpecOf("p", "pipeline", {{"stages", "2"}, {"schedule", "pipedream_2bw"}}));
  EXPECT_FALSE(plain.graph.has_stream_priorities());
}

TEST(TriRace, SparseExchangeSendsTheDrawnRowsAndTheirIndices) {
  const Scenario s = SparseGpt();
  const Plan plan = PlanStrategy(s, Spec({{"stages", "2"}}));
  const TaskGraph& g = plan.graph;
  const int d = 2, m = 4;                // 8 samples = 4 micro-batches x 1 x 2 replicas
  const double row_bytes = 256 * 2 + 8;  // BF16 gradient row + int64 index
  const TokenDistribution tokens(20000, 1.0);
  int exchanges = 0;
  for (const Collective& c : g.collectives()) {
    if (c.kind != CollectiveKind::kAllToAllV) continue;
    const std::string name(g.task(c.members[0]).name.str());
    ASSERT_TRUE(StartsWith(name, "it")) << name;
    const int iteration = std::stoi(name.substr(2));
    ASSERT_EQ(c.ranks, (std::vector<int>{0, 2}));  // stage 0 of both replicas (order tpd)
    for (int i = 0; i < d; ++i) {
      const long long rows = tokens.DistinctIds(m * 128, BatchSeed(42, i, iteration));
      EXPECT_GT(rows, 50);
      EXPECT_LT(rows, m * 128);
      for (int j = 0; j < d; ++j) {
        EXPECT_DOUBLE_EQ(c.matrix[i * d + j], i == j ? 0 : rows * row_bytes) << name;
      }
    }
    ++exchanges;
  }
  EXPECT_EQ(exchanges, 3);  // one per iteration
  // The token table left the dense all-reduce of stage 0: its buckets sum to the stage's other
  // parameters, while plain PipeDream-2BW all-reduces the whole table.
  auto dense_bytes = [&](const Plan& p, int rank) {
    double bytes = 0;
    for (const Collective& c : p.graph.collectives()) {
      if (c.kind == CollectiveKind::kAllReduce && c.ranks[0] == rank &&
          StartsWith(std::string(p.graph.task(c.members[0]).name.str()), "it0/")) {
        bytes += c.bytes;
      }
    }
    return bytes;
  };
  const Plan plain = PlanStrategy(
      s, testing::SpecOf("p", "pipeline", {{"stages", "2"}, {"schedule", "pipedream_2bw"}}));
  EXPECT_DOUBLE_EQ(dense_bytes(plain, 0) - dense_bytes(plan, 0), 20000.0 * 256 * 2);
  EXPECT_DOUBLE_EQ(dense_bytes(plain, 1), dense_bytes(plan, 1));
}

TEST(TriRace, StepOfBatchKWaitsForTheFirstForwardOfBatchKPlusTwo) {
  const Plan plan = PlanStrategy(SparseGpt(), Spec({{"stages", "2"}}));
  const TaskGraph& g = plan.graph;
  // Stage 0 of replica 0 is rank 0: the position of the first task of each kind on its compute
  // stream (tasks of a stream run in the order they were added).
  auto index = [&](const TaskGraph& graph, const std::string& prefix) {
    int i = 0;
    for (const Task& t : graph.tasks()) {
      if (t.rank != 0 || graph.streams()[t.stream] != "compute") continue;
      if (StartsWith(t.name.str(), prefix)) return i;
      ++i;
    }
    return -1;
  };
  // Batch 1's first forward comes before batch 0's step; batch 2's after it.
  ASSERT_GE(index(g, "it2/mb8/"), 0);
  EXPECT_LT(index(g, "it1/mb4/"), index(g, "it0/adam"));
  EXPECT_LT(index(g, "it0/adam"), index(g, "it2/mb8/"));
  // and after batch 1's second forward: it waited past where plain 2BW steps.
  EXPECT_LT(index(g, "it1/mb5/"), index(g, "it0/adam"));
  // Without deferral the step follows batch 0's last backward (plain 2BW's place).
  const Plan eager = PlanStrategy(SparseGpt(), Spec({{"stages", "2"}, {"defer_dense", "false"}}));
  // Stage 0 forwards p - 1 = 1 micro-batch of batch 1 before batch 0's last backward and step.
  EXPECT_LT(index(eager.graph, "it1/mb4/"), index(eager.graph, "it0/adam"));
  EXPECT_LT(index(eager.graph, "it0/adam"), index(eager.graph, "it1/mb5/"));
}

TEST(TriRace, TopologyAwareGatingOnlyWhereLinksAreShared) {
  // One NVSwitch server: nothing is shared, so both classes run on their free streams.
  const Plan inside = PlanStrategy(SparseGpt(), Spec({{"stages", "2"}}));
  for (const Collective& c : inside.graph.collectives()) {
    const std::string stream = inside.graph.streams()[inside.graph.task(c.members[0]).stream];
    EXPECT_TRUE(stream == "dp_free" || stream == "sparse_free") << stream;
  }
  // Four servers of one GPU: every transfer leaves through a NIC that both classes use.
  Scenario s = SparseGpt();
  s.cluster.groups[0].count = 4;
  s.cluster.groups[0].gpus_per_server = 1;
  const Plan across = PlanStrategy(s, Spec({{"stages", "2"}}));
  int gated = 0;
  for (const Collective& c : across.graph.collectives()) {
    const std::string stream = across.graph.streams()[across.graph.task(c.members[0]).stream];
    EXPECT_TRUE(stream == "dp" || stream == "sparse") << stream;
    ++gated;
  }
  EXPECT_GT(gated, 0);
  const Plan always =
      PlanStrategy(SparseGpt(), Spec({{"stages", "2"}, {"topology_aware", "false"}}));
  for (const Collective& c : always.graph.collectives()) {
    const std::string stream = always.graph.streams()[always.graph.task(c.members[0]).stream];
    EXPECT_TRUE(stream == "dp" || stream == "sparse") << stream;
  }
}

}  // namespace
}  // namespace stratasim
