// Compressed data parallelism (strategies/comm/compressed_ddp.h) simulated: S2Reducer's
// exchange against the ring all-reduce's alpha-beta closed form of its 4rc + n/8 bytes, the
// encode and decode as the roofline prices them, and folding exact where it is allowed.
#include <gtest/gtest.h>

#include <string>

#include "core/compute_model.h"
#include "sim/collectives/protocol.h"
#include "sim/collectives/registry.h"
#include "strategies/test_scenario.h"
#include "tests/simulated_strategy.h"
#include "tests/test_clusters.h"

namespace stratasim {
namespace {

constexpr int kVocabulary = 50000;
constexpr int kHidden = 256;

// Two servers of one A100 each on a 10 Gb/s NIC (1.25 GB/s): a tiny GPT with a sparse embedding
// over a 50,000-token vocabulary, S2Reducer with a 2 x 20,000 sketch over a forced
// single-channel ring of NCCL's simple protocol.
Scenario TwoNodes(int servers = 2, int gpus_per_server = 1) {
  Scenario s =
      testing::TinyGptScenario({gpus_per_server, servers, 2 * servers * gpus_per_server, 1, 2, 4});
  testing::NvSwitchOptions o = testing::NvSwitchLayout(servers, gpus_per_server, 1);
  o.nic_Bps = 1.25e9;
  s.cluster = testing::NvSwitchCluster(o);
  s.model.vocabulary = kVocabulary;
  s.model.sparse_embedding = true;
  s.training.warmup_iterations = 1;
  s.training.measured_iterations = 1;
  s.training.seed = 3;
  s.simulation.collectives.protocol = "simple";
  s.simulation.collectives.channels = 1;
  s.strategies.push_back(
      testing::SpecOf("s2", "s2reducer",
                      {{"sketch_rows", "2"}, {"sketch_columns", "20000"}, {"algorithm", "ring"}}));
  return s;
}

const TraceRecord& RecordNamed(const testing::SimulatedStrategy& run, int rank,
                               const std::string& name) {
  for (const Task& t : run.plan.graph.tasks()) {
    if (t.rank == rank && t.name.str() == name) return run.trace.records[t.id];
  }
  ADD_FAILURE() << "no task " << name;
  static const TraceRecord none;
  return none;
}

TEST(Compression, S2ReducerExchangeIsTheRingAllReduceOfTheSketchAndBitmap) {
  const Scenario s = TwoNodes();
  const testing::SimulatedStrategy run = testing::Simulated(s, "s2");
  // 4rc + n/8 = 4 x 2 x 20,000 + 50,000 / 8 bytes, whatever the workers.
  const double bytes = 4.0 * 2 * 20000 + kVocabulary / 8.0;
  // docs/collectives.md: T = b + 2(N-1)(delta + alpha + S/(N B)), alpha = NIC up + switch +
  // NIC down.
  const testing::NvSwitchOptions o = testing::NvSwitchLayout(2, 1, 1);
  const sim::NcclAlgorithm ring =
      sim::FindCollectiveAlgorithm(CollectiveKind::kAllReduce, "ring").nccl;
  const double alpha = 2 * o.nic_latency_s + o.switch_latency_s;
  const double expected =
      sim::BaseLatencySeconds(ring, sim::Protocol::kSimple) +
      2.0 * (2 - 1) *
          (sim::StepLatencySeconds(ring, sim::Protocol::kSimple, sim::HopKind::kNet) + alpha +
           bytes / (2 * 1.25e9));
  for (int it : {0, 1}) {
    for (int r : {0, 1}) {
      const TraceRecord& ar =
          RecordNamed(run, r, "it" + std::to_string(it) + "/all_reduce/embedding/sketch+bitmap");
      EXPECT_NEAR(ar.end_s - ar.peers_joined_s, expected, 0.01 * expected) << it << " " << r;
    }
  }
  // The encode and decode last what the roofline gives their bytes (alone on the GPU: the
  // backward pass is over when the table's gradient is final).
  for (const char* stage : {"it1/encode/embedding", "it1/decode/embedding"}) {
    const TraceRecord& rec = RecordNamed(run, 0, stage);
    const Task& t = run.plan.graph.task(rec.task);
    EXPECT_NEAR(rec.end_s - rec.start_s,
                ComputeTaskSeconds(t, s.cluster.GpuOfRank(0), s.simulation),
                1e-9 + 1e-6 * (rec.end_s - rec.start_s))
        << stage;
  }
}

TEST(Compression, FoldedQuantizerRunsAsTheFullOne) {
  // Four servers of two GPUs: a quantizer does the same work on every replica, so it folds, and
  // the folded run's iteration equals the full one.
  Scenario s = TwoNodes(4, 2);
  s.strategies = {testing::SpecOf("casq", "casq", {}),
                  testing::SpecOf("int8", "uniform-int8", {{"scope", "embedding"}})};
  Scenario full = s;
  full.simulation.fold = false;
  for (const char* name : {"casq", "int8"}) {
    const testing::SimulatedStrategy folded = testing::Simulated(s, name);
    ASSERT_EQ(folded.plan.fold.rfind("folded", 0), 0u) << folded.plan.fold;
    const testing::SimulatedStrategy whole = testing::Simulated(full, name);
    EXPECT_NEAR(folded.metrics.iteration_time_s, whole.metrics.iteration_time_s,
                1e-9 * whole.metrics.iteration_time_s)
        << name;
  }
}

}  // namespace
}  // namespace stratasim
