#include "strategies/async/async.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "models/memory.h"
#include "models/workload.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

using testing::PlanErrorOf;
using testing::SpecOf;

// 2 servers of 2 GPUs, 3 iterations.
Scenario Small(int global_batch = 8) {
  Scenario s = testing::TinyGptScenario({2, 2, global_batch, 1, 2, 4});
  s.training.warmup_iterations = 1;
  s.training.measured_iterations = 2;
  return s;
}

double Params(const Scenario& s) {
  return BuildWorkload(s.model, s.training.micro_batch, s.training.precision, s.training.seed)
      .params;
}

bool Has(const std::string& name, const std::string& part) {
  return name.find(part) != std::string::npos;
}

// Every task `id` waits for, transitively: dependencies, stream order and a receive's send.
std::set<TaskId> Ancestors(const TaskGraph& g, TaskId id) {
  std::set<TaskId> seen;
  std::vector<TaskId> todo = {id};
  // Stream order is a dependency too: the previous task on the same rank and stream.
  std::map<std::pair<int, int>, std::vector<TaskId>> on;
  // A receive completes only with its send (the pair's rendezvous).
  std::map<int, TaskId> send_of_tag;
  for (const Task& t : g.tasks()) {
    on[{t.rank, t.stream}].push_back(t.id);
    if (t.kind == TaskKind::kSend) send_of_tag[t.tag] = t.id;
  }
  while (!todo.empty()) {
    const Task& t = g.task(todo.back());
    todo.pop_back();
    std::vector<TaskId> before = t.deps;
    const std::vector<TaskId>& same = on[{t.rank, t.stream}];
    auto it = std::find(same.begin(), same.end(), t.id);
    if (it != same.begin()) before.push_back(*(it - 1));
    if (t.kind == TaskKind::kRecv) before.push_back(send_of_tag.at(t.tag));
    for (TaskId d : before) {
      if (seen.insert(d).second) todo.push_back(d);
    }
  }
  return seen;
}

TEST(ParameterServer, DedicatedShardsReceiveEveryWorkersSliceAndSendParametersBack) {
  const Scenario s = Small(6);  // 3 workers, 1 shard on rank 3
  const Plan p = PlanParameterServer(
      s, SpecOf("ps", "parameter-server", {{"servers", "1"}, {"placement", "dedicated"}}));
  const double slice = Params(s) * 2;  // BF16 gradients and weights, one shard
  int pushes = 0, pulls = 0;
  for (const Task& t : p.graph.tasks()) {
    if (t.kind != TaskKind::kSend) continue;
    if (Has(t.name.str(), "push/")) {
      EXPECT_EQ(t.peer, 3);
      ++pushes;
    } else {
      EXPECT_EQ(t.rank, 3);
      ++pulls;
    }
    EXPECT_NEAR(t.bytes, slice, 1e-6 * slice);
  }
  EXPECT_EQ(pushes, 3 * 3);  // 3 workers x 3 iterations
  EXPECT_EQ(pulls, 3 * 3);
  // The shard trains nothing: no forward kernel on rank 3.
  for (const Task& t : p.graph.tasks()) {
    if (t.rank == 3) {
      EXPECT_NE(t.phase, Phase::kForward) << t.name.str();
    }
  }
}

TEST(ParameterServer, ColocatedShardsSendNothingToTheirOwnGpu) {
  const Scenario s = Small();
  const Plan p = PlanParameterServer(s, SpecOf("ps", "parameter-server", {}));  // 2 shards
  int sends = 0;
  for (const Task& t : p.graph.tasks()) {
    if (t.kind == TaskKind::kSend) {
      EXPECT_NE(t.rank, t.peer);
      EXPECT_NEAR(t.bytes, Params(s) * 2 / 2, 1);
      ++sends;
    }
  }
  // Per iteration 4 workers x 2 shards pushes, minus the 2 to their own GPU; pulls alike.
  EXPECT_EQ(sends, 3 * 2 * (4 * 2 - 2));
}

TEST(ParameterServer, SspPullWaitsForEveryWorkersPushOfTMinusS) {
  const Scenario s = Small(6);  // 3 workers, 1 dedicated shard
  for (int staleness : {1, 2}) {
    const Plan p = PlanParameterServer(s, SpecOf("ssp", "ssp",
                                                 {{"placement", "dedicated"},
                                                  {"servers", "1"},
                                                  {"staleness", std::to_string(staleness)}}));
    const TaskGraph& g = p.graph;
    // The first forward kernel of worker 0 in the last iteration (2) waits for every worker's
    // update of 2 - s - 1 but no other worker's of a later one.
    TaskId first = -1;
    for (const Task& t : g.tasks()) {
      if (t.rank == 0 && t.iteration == 2 && t.phase == Phase::kForward) {
        first = t.id;
        break;
      }
    }
    ASSERT_GE(first, 0);
    const std::set<TaskId> before = Ancestors(g, first);
    for (const Task& t : g.tasks()) {
      if (!Has(t.name.str(), "adam/worker")) continue;
      const bool own = Has(t.name.str(), "adam/worker0");
      const bool needed = t.iteration <= 2 - staleness - 1 || (own && t.iteration < 2);
      EXPECT_EQ(before.count(t.id) > 0, needed)
          << "s = " << staleness << ": " << t.name.str() << " on rank " << t.rank;
    }
  }
}

TEST(ParameterServer, BspShardSumsThePushesAndStepsOnce) {
  const Scenario s = Small(6);
  const Plan p = PlanParameterServer(
      s, SpecOf("ps", "parameter-server", {{"servers", "1"}, {"placement", "dedicated"}}));
  int sums = 0, steps = 0;
  for (const Task& t : p.graph.tasks()) {
    if (Has(t.name.str(), "sum_pushes")) {
      ++sums;
      EXPECT_EQ(t.deps.size(), 3u);  // the three workers' pushes
    }
    if (t.phase == Phase::kOptimizer && Has(t.name.str(), "adam")) ++steps;
  }
  EXPECT_EQ(sums, 3);
  EXPECT_EQ(steps, 3);  // one per iteration, on the shard; none on the workers
}

TEST(ParameterServer, ShardHoldsTheOptimizerStatesAndWorkersDoNot) {
  const Scenario s = Small(6);
  const Plan p = PlanParameterServer(
      s, SpecOf("ps", "parameter-server", {{"servers", "1"}, {"placement", "dedicated"}}));
  const double params = Params(s);
  std::map<int, double> optimizer;
  for (const Task& t : p.graph.tasks()) {
    if (t.kind == TaskKind::kMemory && t.category == "optimizer") {
      optimizer[t.rank] += t.memory_delta_bytes;
    }
  }
  EXPECT_EQ(optimizer.size(), 1u);
  EXPECT_NEAR(optimizer[3], AdamStateBytes(params, DType::kBF16).optimizer, 1);
}

TEST(ParameterServer, BadOptionsAreLocatedErrors) {
  const Scenario s = Small();
  EXPECT_EQ(PlanErrorOf(s, SpecOf("ps", "parameter-server",
                                  {{"servers", "4"}, {"placement", "dedicated"}})),
            "s.yaml:9:5: strategies[0].options.servers = \"4\": dedicated shards leave no GPU to "
            "train: 4 shard(s) on 4 GPUs");
  EXPECT_EQ(PlanErrorOf(s, SpecOf("ps", "parameter-server", {{"servers", "5"}})),
            "s.yaml:9:5: strategies[0].options.servers = \"5\": more colocated shards than GPUs "
            "(4)");
  EXPECT_EQ(PlanErrorOf(s, SpecOf("ssp", "ssp", {{"staleness", "0"}})),
            "s.yaml:9:5: strategies[0].options.staleness = \"0\": must be an integer in [1, "
            "1000]");
  EXPECT_EQ(PlanErrorOf(s, SpecOf("ps", "parameter-server", {{"placement", "remote"}})),
            "s.yaml:9:5: strategies[0].options.placement = \"remote\": must be one of: "
            "colocated, dedicated");
  // parameter-server is BSP: it has no staleness.
  EXPECT_NE(PlanErrorOf(s, SpecOf("ps", "parameter-server", {{"staleness", "2"}}))
                .find("strategies[0].options.staleness"),
            std::string::npos);
  // 8 samples do not split over 3 workers.
  EXPECT_NE(PlanErrorOf(
                s, SpecOf("ps", "parameter-server", {{"servers", "1"}, {"placement", "dedicated"}}))
                .find("over 3 workers"),
            std::string::npos);
}

TEST(ParameterServer, CpuShardsRunOnTheHostAndEveryGpuTrains) {
  Scenario s = Small();  // 2 servers of 2 GPUs, one socket each
  PcieSpec pcie;
  pcie.gpus_per_switch = 1;
  pcie.sockets = 2;
  s.cluster.groups[0].pcie = pcie;
  const Plan p = PlanParameterServer(
      s, SpecOf("ps", "ssp", {{"server_device", "cpu"}, {"servers", "4"}, {"staleness", "1"}}));
  // Shards 0, 1 on servers 0, 1 (socket 0: ranks 0, 2); shards 2, 3 on their socket 1 (1, 3).
  std::set<int> host_ranks;
  int forward_ranks = 0;
  std::set<int> seen;
  for (const Task& t : p.graph.tasks()) {
    if (t.phase == Phase::kForward && seen.insert(t.rank).second) ++forward_ranks;
    if (Has(t.name.str(), "push/worker") || Has(t.name.str(), "adam/worker") ||
        Has(t.name.str(), "pull/worker")) {
      EXPECT_TRUE(t.on_host) << t.name.str();
      host_ranks.insert(t.rank);
    } else {
      EXPECT_FALSE(t.on_host) << t.name.str();
    }
    // Host memory is not GPU memory: no memory events for the shards.
    if (t.kind == TaskKind::kMemory) {
      EXPECT_NE(t.category.str(), "optimizer");
    }
  }
  EXPECT_EQ(forward_ranks, 4);
  EXPECT_EQ(host_ranks, (std::set<int>{0, 1, 2, 3}));
  // A worker's own server's CPU is still a transfer (over PCIe): 4 workers x 4 shards.
  int pushes = 0;
  for (const Task& t : p.graph.tasks()) {
    if (t.kind == TaskKind::kSend && t.iteration == 0 && Has(t.name.str(), "push/")) ++pushes;
  }
  EXPECT_EQ(pushes, 16);
  EXPECT_EQ(PlanErrorOf(s, SpecOf("ps", "parameter-server",
                                  {{"server_device", "cpu"}, {"placement", "dedicated"}})),
            "s.yaml:9:5: strategies[0].options.placement = \"dedicated\": places GPU shards; "
            "with server_device: cpu every GPU trains");
}

TEST(DcS3gd, NextForwardDoesNotWaitForTheUpdateAllReduceButItsMergeDoes) {
  const Scenario s = Small();
  const Plan p = PlanDcS3gd(s, SpecOf("dc", "dc-s3gd", {}));
  const TaskGraph& g = p.graph;
  ASSERT_EQ(g.collectives().size(), 3u);  // one update all-reduce per iteration
  const TaskId allreduce0 = g.collectives()[0].members[0];
  EXPECT_NEAR(g.collectives()[0].bytes, Params(s) * 4, 1);  // FP32 update
  TaskId forward1 = -1, merge1 = -1, backward1_end = -1;
  for (const Task& t : g.tasks()) {
    if (t.rank != 0 || t.iteration != 1) continue;
    if (t.phase == Phase::kForward && forward1 < 0) forward1 = t.id;
    if (t.phase == Phase::kBackward) backward1_end = t.id;
    if (Has(t.name.str(), "dc/merge_update")) merge1 = t.id;
  }
  ASSERT_GE(forward1, 0);
  ASSERT_GE(merge1, 0);
  EXPECT_EQ(Ancestors(g, forward1).count(allreduce0), 0u);
  EXPECT_EQ(Ancestors(g, backward1_end).count(allreduce0), 0u);
  EXPECT_EQ(Ancestors(g, merge1).count(allreduce0), 1u);
  EXPECT_EQ(Ancestors(g, merge1).count(backward1_end), 1u);
}

TEST(DcS3gd, MemoryHoldsTheExtraModelSizeBuffers) {
  const Scenario s = Small();
  for (const bool compensate : {true, false}) {
    const Plan p = PlanDcS3gd(
        s, SpecOf("dc", "dc-s3gd", {{"delay_compensation", compensate ? "true" : "false"}}));
    double extra = 0;
    int compensations = 0;
    for (const Task& t : p.graph.tasks()) {
      if (t.rank != 0) continue;
      if (t.kind == TaskKind::kMemory && Has(t.name.str(), "dc_s3gd_")) {
        extra += t.memory_delta_bytes;
      }
      if (Has(t.name.str(), "dc/compensate")) {
        ++compensations;
        // Reads g and D, writes g^: 2 x 2 + 4 bytes per parameter in BF16 training.
        EXPECT_NEAR(t.bytes, 8 * Params(s), 1);
      }
    }
    EXPECT_NEAR(extra, (compensate ? 3 : 2) * 4 * Params(s), 1);
    EXPECT_EQ(compensations, compensate ? 2 : 0);  // iterations 1 and 2 merge a delayed update
  }
}

TEST(DcS3gd, BadOptionsAreLocatedErrors) {
  const Scenario s = Small();
  EXPECT_EQ(PlanErrorOf(s, SpecOf("dc", "dc-s3gd", {{"delay_compensation", "maybe"}})),
            "s.yaml:9:5: strategies[0].options.delay_compensation = \"maybe\": must be true or "
            "false");
  EXPECT_NE(PlanErrorOf(s, SpecOf("dc", "dc-s3gd", {{"algorithm", "telepathy"}}))
                .find("strategies[0].options.algorithm = \"telepathy\": must be one of"),
            std::string::npos);
  EXPECT_NE(PlanErrorOf(s, SpecOf("dc", "dc-s3gd", {{"staleness", "2"}})).find("staleness"),
            std::string::npos);
}

}  // namespace
}  // namespace stratasim
