// GNN feature transfer (strategies/gnn/) simulated: host-to-device copies contend on the PCIe
// tree as its links say, and batch reuse saves iteration time by the bytes it does not copy.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/model_presets.h"
#include "sim/executor.h"
#include "strategies/test_scenario.h"
#include "tests/simulated_strategy.h"
#include "tests/test_clusters.h"

namespace stratasim {
namespace {

constexpr double kPcie3Bps = 15.75e9;  // testing::Pcie3Tree: every PCIe link and uplink

ClusterSpec OneCommodityBox() {
  return testing::ClusterOf({testing::CommodityPcieGroup("box", 1, false, 1)},
                            testing::SingleSwitchNetwork());
}

// One host-to-device copy of `bytes` per rank of `ranks`, all ready at time 0; their durations.
std::vector<double> CopyTimes(const ClusterSpec& c, const std::vector<int>& ranks, double bytes) {
  TaskGraph g(c.NumGpus());
  const int stream = g.Stream("h2d");
  std::vector<TaskId> ids;
  for (int r : ranks) {
    Task t;
    t.kind = TaskKind::kCopy;
    t.copy = CopyDirection::kHostToDevice;
    t.rank = r;
    t.stream = stream;
    t.name = "features";
    t.bytes = bytes;
    ids.push_back(g.Add(t));
  }
  const ExecutionTrace trace = sim::Simulate(g, c, SimulationSpec{});
  std::vector<double> out;
  for (TaskId id : ids) out.push_back(trace.records[id].end_s - trace.records[id].start_s);
  return out;
}

TEST(GnnTransfer, TwoGpusUnderOnePcieSwitchShareItsUplink) {
  const ClusterSpec c = OneCommodityBox();
  const double bytes = 1e9;
  // Route socket -> switch uplink -> GPU link: 2 us of latency, then bytes at 15.75 GB/s.
  const double alone = CopyTimes(c, {0}, bytes)[0];
  EXPECT_NEAR(alone, bytes / kPcie3Bps, 5e-6);
  // GPUs 0 and 1 hang under one switch: both copies cross its uplink, each at half its rate.
  for (double t : CopyTimes(c, {0, 1}, bytes)) EXPECT_NEAR(t, 2 * bytes / kPcie3Bps, 5e-6);
  // GPUs 0 and 2 sit under different switches of different sockets: no shared link.
  for (double t : CopyTimes(c, {0, 2}, bytes)) EXPECT_NEAR(t, alone, 1e-9);
}

// One box of 4 RTX 3090s training GraphSAGE with wide features (1024) on a power-law graph, so
// that the copies weigh.
Scenario WideFeatures() {
  Scenario s = testing::TinyGptScenario({4, 1, 1024, 256, 2, 4});
  s.cluster = OneCommodityBox();
  s.model = *FindModelPreset("graphsage-products");
  s.model.graph = "power-law";
  s.model.graph_vertices = 200000;
  s.model.graph_degree = 20;
  s.model.feature_dim = 1024;
  s.model.fanouts = {10, 5};
  s.model.layers = 2;
  s.training.precision = DType::kFP32;
  s.training.warmup_iterations = 1;
  s.training.measured_iterations = 2;
  s.training.seed = 4;
  s.strategies = {testing::SpecOf("none", "gnn-no-cache", {}),
                  testing::SpecOf("reuse", "brgraph", {})};
  return s;
}

TEST(GnnTransfer, BatchReuseSavesTheCopyTimeOfItsHits) {
  const Scenario s = WideFeatures();
  const testing::SimulatedStrategy none = testing::Simulated(s, "none");
  const testing::SimulatedStrategy reuse = testing::Simulated(s, "reuse");
  ASSERT_TRUE(reuse.plan.gnn && none.plan.gnn);
  EXPECT_GT(reuse.plan.gnn->HitRate(), 0.1);
  EXPECT_LT(reuse.plan.gnn->h2d_bytes_per_iteration, none.plan.gnn->h2d_bytes_per_iteration);
  EXPECT_LT(reuse.metrics.iteration_time_s, none.metrics.iteration_time_s);
  // The kept batch is on the GPU: the peak memory holds it.
  EXPECT_GT(reuse.metrics.peak_memory_bytes[0], none.metrics.peak_memory_bytes[0]);
}

}  // namespace
}  // namespace stratasim
