// HSDP simulated end to end (strategies/sharded/hsdp.h): with both fragments non-empty, a
// unit's all-gathers take the slower of the NVSwitch ring inside the server and the NIC ring
// across servers, as they run at once on separate links; either fragment alone (split 1:
// hybrid sharding's placement, split 0: everything across servers) takes longer. Times
// against the ring's alpha-beta closed form (docs/collectives.md), as
// collectives_closed_form_test.cpp checks them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/scenario.h"
#include "models/workload.h"
#include "sim/collectives/protocol.h"
#include "sim/collectives/registry.h"
#include "tests/simulated_strategy.h"

namespace stratasim {
namespace {

// 2 servers x 4 A100s, NVSwitch 100 GB/s per GPU, one 25 GB/s NIC per GPU (rates as written:
// efficiency 1, docs/links.md); rings of one
// channel with the simple protocol, no kernel launch cost, one micro-batch, no prefetch (so
// that each unit's all-gathers start when the previous unit's compute ends, with nothing
// else on the links).
const char kScenario[] = R"(
name: hsdp-closed-form
cluster:
  servers:
    - name: box
      count: 2
      gpu: A100-SXM4-80GB
      gpus_per_server: 4
      nvswitch: {bandwidth: "100GB/s", latency: "1us", efficiency: 1}
      nics: {count: 4, bandwidth: "25GB/s", latency: "2us", efficiency: 1}
  network: {kind: single_switch, latency: "1us"}
model: {kind: gpt, layers: 4, hidden: 2048, heads: 16, sequence: 512, vocabulary: 8192}
training:
  global_batch: 8
  micro_batch: 1
  precision: bf16
  iterations: {warmup: 0, measured: 1}
simulation:
  kernel_launch: "0s"
  collectives:
    algorithms: {all_gather: ring, reduce_scatter: ring, all_reduce: ring}
    protocol: simple
    channels: 1
strategies:
  - {name: split-0.75, kind: hsdp, options: {split: 0.75, prefetch: false}}
  - {name: split-1, kind: hsdp, options: {split: 1, prefetch: false}}
  - {name: split-0, kind: hsdp, options: {split: 0, prefetch: false}}
  - {name: auto, kind: hsdp, options: {prefetch: false}}
  - {name: auto-prefetch, kind: hsdp}
)";

constexpr double kNvSwitchBps = 100e9, kNicBps = 25e9;
constexpr int kGpusPerServer = 4, kServers = 2;

double Base() {
  return sim::BaseLatencySeconds(
      sim::FindCollectiveAlgorithm(CollectiveKind::kAllReduce, "ring").nccl,
      sim::Protocol::kSimple);
}
double Step(sim::HopKind hop) {
  return sim::StepLatencySeconds(
      sim::FindCollectiveAlgorithm(CollectiveKind::kAllReduce, "ring").nccl, sim::Protocol::kSimple,
      hop);
}

// Ring all-gather of `bytes` over the 4 GPUs of a server (each hop NVSwitch port up and
// down) and over the 2 servers along a rail (NIC up, switch, NIC down).
double NvSwitchGatherSeconds(double bytes) {
  if (bytes <= 0) return 0;
  const int n = kGpusPerServer;
  return Base() + (n - 1) * (Step(sim::HopKind::kNvLink) + 2 * 1e-6 + bytes / (n * kNvSwitchBps));
}
double NicGatherSeconds(double bytes) {
  if (bytes <= 0) return 0;
  const int n = kServers;
  return Base() + (n - 1) * (Step(sim::HopKind::kNet) + 2 * 2e-6 + 1e-6 + bytes / (n * kNicBps));
}

struct LayerTime {
  double seconds = 0;  // from the end of layer0's forward to the end of layer1's, on rank 0
  double compute = 0;  // layer1's forward kernels
};

// Layer1's forward on rank 0: its all-gathers wait for layer0's forward to end (no prefetch).
LayerTime Layer1Forward(const testing::SimulatedStrategy& run) {
  const TaskGraph& g = run.plan.graph;
  double layer0_end = 0, layer1_end = 0;
  LayerTime t;
  for (const Task& task : g.tasks()) {
    if (task.rank != 0 || task.kind != TaskKind::kCompute || task.phase != Phase::kForward) {
      continue;
    }
    const std::string name = task.name.str();
    const TraceRecord& r = run.trace.records[task.id];
    if (name.rfind("it0/mb0/layer0/", 0) == 0) layer0_end = std::max(layer0_end, r.end_s);
    if (name.rfind("it0/mb0/layer1/", 0) == 0) {
      layer1_end = std::max(layer1_end, r.end_s);
      t.compute += r.end_s - r.start_s;
    }
  }
  EXPECT_GT(layer0_end, 0);
  t.seconds = layer1_end - layer0_end;
  return t;
}

class HsdpSimulated : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scenario_ = new Scenario(LoadScenarioText(kScenario, "hsdp.yaml"));
  }
  static void TearDownTestSuite() { delete scenario_; }
  static double LayerBytes() {
    const Workload w = BuildWorkload(scenario_->model, 1, DType::kBF16);
    return w.layers[2].params * 2;  // "layer1", BF16
  }
  static Scenario* scenario_;
};
Scenario* HsdpSimulated::scenario_ = nullptr;

TEST_F(HsdpSimulated, LayerTimeIsTheSlowerLinkWithBothFragmentsAndWorseWithEitherAlone) {
  const double full = LayerBytes();
  const LayerTime both = Layer1Forward(testing::Simulated(*scenario_, "split-0.75"));
  const LayerTime intra = Layer1Forward(testing::Simulated(*scenario_, "split-1"));
  const LayerTime inter = Layer1Forward(testing::Simulated(*scenario_, "split-0"));
  const double nvl = NvSwitchGatherSeconds(0.75 * full), nic = NicGatherSeconds(0.25 * full);
  // Both links busy at once: the layer's communication is the slower of the two rings, not
  // their sum.
  EXPECT_NEAR(both.seconds - both.compute, std::max(nvl, nic), 0.02 * std::max(nvl, nic));
  EXPECT_LT(both.seconds - both.compute, 0.8 * (nvl + nic));
  EXPECT_NEAR(intra.seconds - intra.compute, NvSwitchGatherSeconds(full),
              0.02 * NvSwitchGatherSeconds(full));
  EXPECT_NEAR(inter.seconds - inter.compute, NicGatherSeconds(full), 0.02 * NicGatherSeconds(full));
  EXPECT_LT(both.seconds, intra.seconds);
  EXPECT_LT(both.seconds, inter.seconds);
  // Balanced as 0.75 is (0.75 x 3/4 / 100 vs 0.25 x 1/2 / 25 GB/s), the layer's
  // communication is 0.75 of split 1's.
  EXPECT_NEAR((both.seconds - both.compute) / (intra.seconds - intra.compute), 0.75, 0.03);
}

TEST_F(HsdpSimulated, ThePlannerBalancesTheLinksAndTheIterationIsFasterThanEitherAlone) {
  const auto both = testing::Simulated(*scenario_, "split-0.75");
  const auto planned = testing::Simulated(*scenario_, "auto");
  // The planner's fraction for layer1: 0.75 (3/4 x 0.75 / 100 GB/s against 1/2 x 0.25 / 25).
  bool found = false;
  for (const Collective& c : planned.plan.graph.collectives()) {
    if (planned.plan.graph.task(c.members[0]).name != "it0/mb0/layer1/fwd/all_gather/intra") {
      continue;
    }
    found = true;
    EXPECT_NEAR(c.bytes / LayerBytes(), 0.75, 1e-12);
  }
  EXPECT_TRUE(found);
  EXPECT_LE(planned.metrics.iteration_time_s, both.metrics.iteration_time_s * 1.001);
  for (const char* alone : {"split-1", "split-0"}) {
    EXPECT_LT(planned.metrics.iteration_time_s,
              testing::Simulated(*scenario_, alone).metrics.iteration_time_s)
        << alone;
  }
}

// Folding simulates one server's compute; the rails' other members are mirrors. Exact here.
TEST_F(HsdpSimulated, FoldedRunEqualsTheFullRun) {
  Scenario full = *scenario_;
  full.simulation.fold = false;
  for (const char* name : {"split-0.75", "auto-prefetch"}) {
    const auto folded = testing::Simulated(*scenario_, name);
    const auto unfolded = testing::Simulated(full, name);
    EXPECT_EQ(folded.plan.fold.rfind("folded", 0), 0u) << folded.plan.fold;
    EXPECT_NEAR(folded.metrics.iteration_time_s, unfolded.metrics.iteration_time_s,
                1e-9 * unfolded.metrics.iteration_time_s)
        << name;
  }
}

// A GPU too small for any split: the planner's estimate in the error.
TEST(HsdpPlannerInScenario, MemoryInfeasibleIsALocatedNoFeasiblePlanError) {
  std::string text = kScenario;
  text.replace(text.find("  servers:"), 0,
               "  gpus:\n    - {name: tiny-gpu, peak: {bf16: \"100TFLOPS\", fp16: \"100TFLOPS\"}, "
               "memory: \"1GiB\", "
               "memory_bandwidth: \"1TB/s\"}\n");
  text.replace(text.find("gpu: A100-SXM4-80GB"), std::string("gpu: A100-SXM4-80GB").size(),
               "gpu: tiny-gpu");
  const Scenario s = LoadScenarioText(text, "hsdp.yaml");
  try {
    PlanStrategy(s, s.strategies.at(3));
    FAIL() << "planned";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("hsdp.yaml:"), std::string::npos) << what;
    EXPECT_NE(what.find(": strategies[3]: no feasible plan: the least memory any split needs is "
                        "an estimated "),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("over the limit of 972.80 MiB (memory_fraction x GPU memory)"),
              std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace stratasim
