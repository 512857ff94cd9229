// HPH (strategies/planners/hph.h) simulated on mixed GPUs: the speed-weighted partition evens out
// the stages' measured compute times where an even split leaves the slower GPUs' stage behind,
// and HPH is faster than the even split; recomputation only on the stages that would otherwise
// overflow, where an even split runs out of memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/scenario.h"
#include "tests/simulated_strategy.h"

namespace stratasim {
namespace {

using testing::Simulated;
using testing::SimulatedStrategy;

// One server of 4 A100s (stage 0 of HPH's designed layout) and one of 4 V100s (stage 1): the
// A100's 312 TFLOP/s against the V100's 125 (FP16).
constexpr char kA100V100[] = R"(name: hph-a100-v100
cluster:
  servers:
    - name: a100
      count: 1
      gpu: A100-SXM4-80GB
      gpus_per_server: 4
      nvswitch: {bandwidth: "300GB/s", latency: "1us"}
      nics: {count: 4, bandwidth: "200Gb/s", latency: "2us"}
    - name: v100
      count: 1
      gpu: V100-SXM2
      gpus_per_server: 4
      nvlink: {pairs: [[0,1],[0,2],[0,3],[1,2],[1,3],[2,3]], bandwidth: "25GB/s", latency: "1us"}
      nics: {count: 2, bandwidth: "100Gb/s", latency: "2us"}
  network: {kind: single_switch, latency: "1us"}
model: {kind: gpt, layers: 16, hidden: 1024, heads: 16, sequence: 1024, vocabulary: 8192}
training:
  global_batch: 32
  micro_batch: 2
  precision: fp16
  iterations: {warmup: 0, measured: 1}
strategies:
  - {name: hph, kind: hph, options: {stages: 2}}
  - {name: hph-even, kind: hph, options: {stages: 2, partition: even}}
  - {name: even, kind: pipeline, options: {stages: 2, schedule: 1f1b}}
)";

// One box of 4 RTX 3090s (24 GB) and one of 4 RTX 2080 Tis (11 GB) on PCIe, 4 stages x 2
// replicas; micro-batches of 12 sequences make the first stage of each kind (4 and 2 micro-
// batches in flight under 1F1B) overflow without recomputation.
constexpr char kRtx[] = R"(name: hph-rtx
cluster:
  servers:
    - name: rtx3090-box
      count: 1
      gpu: RTX3090
      gpus_per_server: 4
      pcie: {gpus_per_switch: 2, sockets: 2, bandwidth: "15.75GB/s", latency: "1us",
             socket_link: {bandwidth: "20.8GB/s", latency: "1us"}}
      nics: {count: 1, bandwidth: "100Gb/s", latency: "2us"}
    - name: rtx2080ti-box
      count: 1
      gpu: RTX2080Ti
      gpus_per_server: 4
      pcie: {gpus_per_switch: 2, sockets: 2, bandwidth: "15.75GB/s", latency: "1us",
             socket_link: {bandwidth: "20.8GB/s", latency: "1us"}}
      nics: {count: 1, bandwidth: "100Gb/s", latency: "2us"}
  network: {kind: single_switch, latency: "1us"}
model: {kind: gpt, layers: 24, hidden: 2048, heads: 16, sequence: 1024, vocabulary: 8192}
training:
  global_batch: 96
  micro_batch: 12
  precision: fp16
  iterations: {warmup: 0, measured: 1}
strategies:
  - {name: hph, kind: hph, options: {stages: 4}}
  - {name: hph-no-recompute, kind: hph, options: {stages: 4, recompute: "off"}}
  - {name: even, kind: pipeline, options: {stages: 4, schedule: 1f1b, rank_order: tdp}}
)";

// Measured compute seconds (kernels, recomputation included) of each stage, the mean over its
// GPUs; `per_stage` consecutive ranks per stage (the rank order tdp of HPH's layouts here).
std::vector<double> StageCompute(const SimulatedStrategy& r, int stages, int per_stage) {
  std::vector<double> busy(stages * per_stage, 0);
  for (const Task& t : r.plan.graph.tasks()) {
    if (t.kind != TaskKind::kCompute) continue;
    const TraceRecord& at = r.trace.records[t.id];
    busy[t.rank] += at.end_s - at.start_s;
  }
  std::vector<double> stage(stages, 0);
  for (int g = 0; g < stages * per_stage; ++g) stage[g / per_stage] += busy[g] / per_stage;
  return stage;
}

double Spread(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end()) / *std::min_element(v.begin(), v.end());
}

bool HasNote(const Plan& p, const std::string& text) {
  return std::any_of(p.notes.begin(), p.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

TEST(HphSimulated, SpeedWeightedPartitionEvensOutStageTimesOnMixedGpus) {
  const Scenario s = LoadScenarioText(kA100V100, "hph.yaml");
  const SimulatedStrategy hph = Simulated(s, "hph");
  const SimulatedStrategy even = Simulated(s, "hph-even");
  // Both on the designer's layout: stage 0 on the A100 server, stage 1 on the V100 one.
  EXPECT_TRUE(HasNote(hph.plan, "the designer's layout is rank order tdp"));
  EXPECT_TRUE(HasNote(hph.plan, "speed-weighted partition 24,10 blocks"));
  EXPECT_TRUE(HasNote(even.plan, "even partition 18,16 blocks"));
  const std::vector<double> weighted = StageCompute(hph, 2, 4);
  const std::vector<double> blind = StageCompute(even, 2, 4);
  // The even split leaves the A100s idle half the time; HPH's stages compute within 5 %.
  EXPECT_LT(Spread(weighted), 1.05) << weighted[0] << " " << weighted[1];
  EXPECT_GT(Spread(blind), 1.8) << blind[0] << " " << blind[1];
  EXPECT_LT(hph.metrics.iteration_time_s, 0.8 * even.metrics.iteration_time_s);
}

TEST(HphSimulated, FasterThanAnEvenSplitOnMixedGpus) {
  const Scenario s = LoadScenarioText(kA100V100, "hph.yaml");
  const double hph = Simulated(s, "hph").metrics.iteration_time_s;
  // pipeline's even split in its default order: each replica's two stages in one server, so
  // the V100 replicas hold the A100 ones back at every all-reduce.
  const double even = Simulated(s, "even").metrics.iteration_time_s;
  EXPECT_LT(hph * 1.4, even) << hph << " vs " << even;
}

TEST(HphSimulated, RecomputesOnlyWhereMemoryWouldOverflow) {
  const Scenario s = LoadScenarioText(kRtx, "hph.yaml");
  const SimulatedStrategy hph = Simulated(s, "hph");
  // With explicit rank mappings the designer's best layout puts the 2080 Tis first; their
  // 11 GB cannot hold 1F1B's 4 and 3 micro-batches in flight, the 3090s' 24 GB can hold 2 and 1.
  EXPECT_TRUE(HasNote(hph.plan, "stages on RTX2080Ti x2, RTX3090 x2"));
  EXPECT_TRUE(HasNote(hph.plan, "recomputation only where memory would overflow (stage 0: "));
  // The stages that recompute (by the plan's rank -> stage map): the two on 2080 Tis only.
  std::set<int> recomputing;
  for (const Task& t : hph.plan.graph.tasks()) {
    if (t.phase == Phase::kRecompute) recomputing.insert(hph.plan.rank_stage[t.rank]);
  }
  EXPECT_EQ(recomputing, (std::set<int>{0, 1}));
  EXPECT_TRUE(hph.metrics.oom_ranks.empty());
  for (int g = 0; g < 8; ++g) {
    EXPECT_LE(hph.metrics.peak_memory_bytes[g], s.cluster.GpuOfRank(g).memory_bytes) << g;
  }
  // An even split of the same layout runs out of memory.
  EXPECT_FALSE(Simulated(s, "even").metrics.oom_ranks.empty());
  // With recomputation off the partition gives the 2080 Tis fewer blocks instead.
  const SimulatedStrategy plain = Simulated(s, "hph-no-recompute");
  EXPECT_TRUE(HasNote(plain.plan, "speed-weighted partition 6,6,18,20 blocks"));
  for (const Task& t : plain.plan.graph.tasks()) EXPECT_NE(t.phase, Phase::kRecompute);
  EXPECT_TRUE(plain.metrics.oom_ranks.empty());
}

}  // namespace
}  // namespace stratasim
