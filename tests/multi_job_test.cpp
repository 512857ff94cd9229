// Several jobs on one cluster (docs/multi-job.md): their merged graph simulated once, flows
// sharing links max-min; checked against closed forms and against each job run alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/merge_jobs.h"
#include "cli/run_jobs.h"
#include "core/error.h"
#include "core/scenario.h"
#include "core/task_graph.h"
#include "sim/executor.h"
#include "tests/test_clusters.h"

namespace stratasim {
namespace {

using testing::NvSwitchCluster;
using testing::NvSwitchOptions;

// A job of two ranks sending `bytes` to each other at once: one step of a ring of two, each
// direction its own flow.
TaskGraph RingOfTwo(double bytes) {
  TaskGraph g(2);
  for (int src = 0; src < 2; ++src) {
    Task send, recv;
    send.stream = recv.stream = g.Stream("ring" + std::to_string(src));
    send.name = recv.name = "step";
    g.AddTransfer(src, 1 - src, bytes, send, recv);
  }
  return g;
}

// The end of the last task of job `j` in a merged run.
double JobEnd(const MergedJobs& m, const ExecutionTrace& t, size_t j, const TaskGraph& job) {
  double end = 0;
  for (const Task& task : job.tasks()) {
    end = std::max(end, t.records[static_cast<size_t>(m.first_task[j] + task.id)].end_s);
  }
  return end;
}

// Two leaves of two one-GPU servers; a leaf's uplink is 2 NICs / 4 = 12.5 GB/s per direction.
ClusterSpec TwoLeaves(const NvSwitchOptions& o) {
  ClusterSpec c = NvSwitchCluster(o);
  c.network.kind = NetworkKind::kLeafSpine;
  c.network.servers_per_leaf = 2;
  c.network.oversubscription = 4;
  return c;
}

NvSwitchOptions OneGpuServers() {
  NvSwitchOptions o = testing::NvSwitchLayout(4, 1, 1);
  return o;
}

TEST(MultiJob, TwoJobsWhoseRingsCrossOneUplinkEachGetHalfItsBandwidth) {
  const NvSwitchOptions o = OneGpuServers();
  const ClusterSpec c = TwoLeaves(o);
  const double bytes = 1e9;
  const double uplink_Bps = 2 * o.nic_Bps / 4;
  // Route across the spine: two NICs and three switches (leaf, spine, leaf).
  const double latency_s = 2 * o.nic_latency_s + 3 * o.switch_latency_s;
  const TaskGraph ring = RingOfTwo(bytes);
  // Job a on GPUs 0 (leaf 0) and 2 (leaf 1), job b on GPUs 1 and 3: each direction of each
  // leaf's uplink carries one flow of each job, and nothing else is shared (own NICs).
  const std::vector<PlacedJob> both = {{"a", &ring, {0, 2}, 0}, {"b", &ring, {1, 3}, 0}};
  const MergedJobs alone = MergeJobs({both[0]}, c.NumGpus());
  const ExecutionTrace ta = sim::Simulate(alone.graph, c, SimulationSpec{});
  const double alone_s = JobEnd(alone, ta, 0, ring);
  EXPECT_NEAR(alone_s, latency_s + bytes / uplink_Bps, 1e-9 * alone_s);
  // Max-min on a link of capacity U shared by two flows with no other bottleneck: U / 2 each.
  const MergedJobs shared = MergeJobs(both, c.NumGpus());
  const ExecutionTrace ts = sim::Simulate(shared.graph, c, SimulationSpec{});
  for (size_t j = 0; j < 2; ++j) {
    const double end = JobEnd(shared, ts, j, ring);
    EXPECT_NEAR(end, latency_s + bytes / (uplink_Bps / 2), 1e-9 * end) << j;
  }
  // Placed under one leaf each instead, the rings never leave their leaf: as if alone, at the
  // NIC's rate.
  const MergedJobs local = MergeJobs({{"a", &ring, {0, 1}, 0}, {"b", &ring, {2, 3}, 0}}, 4);
  const ExecutionTrace tl = sim::Simulate(local.graph, c, SimulationSpec{});
  for (size_t j = 0; j < 2; ++j) {
    const double end = JobEnd(local, tl, j, ring);
    EXPECT_NEAR(end, 2 * o.nic_latency_s + o.switch_latency_s + bytes / o.nic_Bps, 1e-9 * end);
  }
}

TEST(MultiJob, MergingRenamesRanksStreamsAndTagsAndRefusesSharedGpus) {
  const TaskGraph ring = RingOfTwo(1e6);
  const MergedJobs m = MergeJobs({{"a", &ring, {0, 2}, 0}, {"b", &ring, {3, 1}, 0}}, 4);
  EXPECT_EQ(m.graph.streams(),
            (std::vector<std::string>{"a/ring0", "a/ring1", "b/ring0", "b/ring1"}));
  ASSERT_EQ(m.first_task, (std::vector<TaskId>{0, 4}));
  const Task& send = m.graph.task(4);  // job b's first send: its rank 0 -> rank 1
  EXPECT_EQ(send.kind, TaskKind::kSend);
  EXPECT_EQ(send.rank, 3);
  EXPECT_EQ(send.peer, 1);
  EXPECT_EQ(m.graph.streams()[static_cast<size_t>(send.stream)], "b/ring0");
  EXPECT_NE(send.tag, m.graph.task(0).tag);  // tags renumbered: each pairs within its job
  auto error_of = [&](const std::vector<PlacedJob>& jobs) -> std::string {
    try {
      MergeJobs(jobs, 4);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of({{"a", &ring, {0, 2}, 0}, {"b", &ring, {2, 3}, 0}}),
            "job b: GPU 2 is outside the cluster or taken by another job");
  EXPECT_EQ(error_of({{"a", &ring, {0, 4}, 0}}),
            "job a: GPU 4 is outside the cluster or taken by another job");
  EXPECT_EQ(error_of({{"a", &ring, {0}, 0}}), "job a: 1 GPUs placed for 2 ranks");
}

TEST(MultiJob, ArrivalDelaysAJobExactly) {
  const NvSwitchOptions o = OneGpuServers();
  const ClusterSpec c = TwoLeaves(o);
  TaskGraph work(2);
  Task k;
  k.stream = work.Stream("compute");
  k.name = "gemm";
  k.flops = 1e12;
  k.rank = 0;
  const TaskId first = work.Add(k);
  Task send, recv;
  send.stream = recv.stream = work.Stream("p2p");
  send.deps = {first};
  work.AddTransfer(0, 1, 1e8, send, recv);
  const double arrival_s = 0.75;
  SimulationSpec spec;
  spec.kernel_launch_s = 0;
  const MergedJobs now = MergeJobs({{"w", &work, {0, 1}, 0}}, 4);
  const MergedJobs later = MergeJobs({{"w", &work, {0, 1}, arrival_s}}, 4);
  EXPECT_EQ(later.graph.rank_start_s(0), arrival_s);
  EXPECT_EQ(later.graph.rank_start_s(2), 0);
  const ExecutionTrace t0 = sim::Simulate(now.graph, c, spec);
  const ExecutionTrace t1 = sim::Simulate(later.graph, c, spec);
  EXPECT_EQ(t0.records[0].start_s, 0);
  EXPECT_EQ(t1.records[0].start_s, arrival_s);  // the timer, not a formula
  for (size_t i = 0; i < t0.records.size(); ++i) {
    const double d0 = t0.records[i].end_s - t0.records[i].start_s;
    const double d1 = t1.records[i].end_s - t1.records[i].start_s;
    EXPECT_NEAR(t1.records[i].start_s, t0.records[i].start_s + arrival_s, 1e-12) << i;
    EXPECT_NEAR(d1, d0, 1e-12) << i;
  }
  // A job that arrives later does not hold the one already there.
  const MergedJobs two =
      MergeJobs({{"w", &work, {0, 1}, 0}, {"v", &work, {2, 3}, arrival_s}}, c.NumGpus());
  const ExecutionTrace t2 = sim::Simulate(two.graph, c, spec);
  EXPECT_EQ(t2.records[0].start_s, 0);
  EXPECT_EQ(t2.records[static_cast<size_t>(two.first_task[1])].start_s, arrival_s);
}

// Two data-parallel jobs of two servers each on four servers of two GPUs under one switch:
// packed, each has its own servers, NICs and NVSwitch ports, and no link is shared.
const char kDisjoint[] = R"(name: disjoint
cluster:
  servers:
    - name: box
      count: 4
      gpu: A100-SXM4-80GB
      gpus_per_server: 2
      nvswitch: {bandwidth: "300GB/s", latency: "1us"}
      nics: {count: 1, bandwidth: "100Gb/s", latency: "2us"}
  network: {kind: leaf_spine, servers_per_leaf: 2, oversubscription: 2, latency: "1us"}
jobs:
  - name: one
    gpus: 4
    model: {preset: gpt2-small}
    training: {global_batch: 8, iterations: {warmup: 1, measured: 2}}
    strategy: {kind: ddp}
  - name: two
    gpus: 4
    model: {preset: gpt2-small, layers: 6}
    training: {global_batch: 16, micro_batch: 2, iterations: {warmup: 1, measured: 2}}
    strategy: {kind: ddp}
placement: [packed, spread]
)";

TEST(MultiJob, TwoJobsOnDisjointServersRunAsIfAloneToTheDigit) {
  const Scenario s = LoadScenarioText(kDisjoint, "disjoint.yaml");
  const JobsResults r = RunJobs(s, 1, "test");
  ASSERT_EQ(r.policies.size(), 2u);
  const PolicyOutcome& packed = r.policies[0];
  ASSERT_TRUE(packed.ok) << packed.error;
  EXPECT_EQ(packed.jobs[0].gpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(packed.jobs[1].gpus, (std::vector<int>{4, 5, 6, 7}));
  for (const JobOutcome& j : packed.jobs) {
    ASSERT_TRUE(j.ok) << j.error;
    EXPECT_GT(j.alone_iteration_s, 0);
    EXPECT_EQ(j.shared_iteration_s, j.alone_iteration_s) << j.name;
    EXPECT_EQ(j.slowdown, 1.0) << j.name;
  }
  EXPECT_DOUBLE_EQ(packed.allocated_fraction, 1.0);
  EXPECT_GT(packed.gpu_busy_fraction, 0);
  EXPECT_LE(packed.gpu_busy_fraction, 1);
  // Spread interleaves the jobs over every server: their rings share NICs and uplinks, so
  // each is slower than alone on the same GPUs.
  const PolicyOutcome& spread = r.policies[1];
  ASSERT_TRUE(spread.ok) << spread.error;
  for (const JobOutcome& j : spread.jobs) {
    ASSERT_TRUE(j.ok) << j.error;
    EXPECT_GT(j.slowdown, 1.0) << j.name;
  }
}

// The shipped scenario: every policy runs, and ddlwmp keeps each job under one leaf (2 servers
// of 4 GPUs: GPUs 8l .. 8l + 7), so no job's traffic crosses an oversubscribed uplink.
TEST(MultiJob, SharedClusterScenarioRunsEveryPolicy) {
  const Scenario s =
      LoadScenarioFile(std::string(STRATASIM_SOURCE_DIR) + "/scenarios/shared-cluster.yaml");
  const JobsResults r = RunJobs(s, 2, "test");
  ASSERT_EQ(r.policies.size(), 4u);
  for (const PolicyOutcome& p : r.policies) {
    ASSERT_TRUE(p.ok) << p.policy << ": " << p.error;
    for (const JobOutcome& j : p.jobs) {
      ASSERT_TRUE(j.ok) << p.policy << " / " << j.name << ": " << j.error;
      EXPECT_GT(j.alone_iteration_s, 0);
    }
  }
  const PolicyOutcome& ddlwmp = r.policies[3];
  ASSERT_EQ(ddlwmp.policy, "ddlwmp");
  for (const JobOutcome& j : ddlwmp.jobs) {
    for (int g : j.gpus) EXPECT_EQ(g / 8, j.gpus.front() / 8) << j.name;
    EXPECT_EQ(j.slowdown, 1.0) << j.name;
  }
}

}  // namespace
}  // namespace stratasim
