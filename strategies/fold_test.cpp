#include "strategies/fold.h"

#include <gtest/gtest.h>

#include "core/scenario.h"

namespace stratasim {
namespace {

// A scenario of `servers` DGX-like servers on `network`, with `extra` lines in the server.
Scenario Cluster(int servers, const std::string& network, const std::string& extra = "") {
  return LoadScenarioText(
      "name: t\ncluster:\n  servers:\n    - name: a\n      count: " + std::to_string(servers) +
          "\n      gpu: A100-SXM4-80GB\n      gpus_per_server: 8\n" + extra +
          "      nics: {count: 8, bandwidth: \"200Gb/s\"}\n  network: " + network +
          "\nmodel: {preset: gpt3-1.3b}\ntraining: {global_batch: 64}\n"
          "strategies:\n  - {name: d, kind: ddp}\n",
      "t.yaml");
}

std::string Why(const Scenario& s, const ReplicaLayout& layout) {
  return DecideFold(s, layout).refusal;
}

const char* kNvSwitch = "      nvswitch: {bandwidth: \"300GB/s\"}\n";

TEST(Fold, AllowsWholeServerReplicasOnSymmetricNetworks) {
  EXPECT_EQ(Why(Cluster(4, "{kind: rail_optimized}", kNvSwitch), {4, 8, 8}), "");
  EXPECT_EQ(Why(Cluster(4, "{kind: single_switch}", kNvSwitch), {2, 16, 4}), "");
  EXPECT_EQ(
      Why(Cluster(8, "{kind: leaf_spine, servers_per_leaf: 2, oversubscription: 2}", kNvSwitch),
          {4, 16, 8}),
      "");
  EXPECT_EQ(
      Why(Cluster(8, "{kind: leaf_spine, servers_per_leaf: 4, oversubscription: 2}", kNvSwitch),
          {4, 16, 8}),
      "");
}

TEST(Fold, RefusesWithTheReason) {
  Scenario s = Cluster(4, "{kind: rail_optimized}", kNvSwitch);
  EXPECT_EQ(Why(s, {1, 32, 8}), "one data-parallel replica, nothing to fold");
  EXPECT_EQ(Why(s, {2, 16, 8}), "");
  EXPECT_EQ(Why(Cluster(1, "{kind: single_switch}", kNvSwitch), {2, 4, 4}),
            "the replicas (2 x 4 GPUs) do not form two or more blocks of whole servers");
  EXPECT_EQ(Why(s, {2, 16, 16}), "tensor groups of 16 span servers of 8 GPUs");
  s.simulation.fold = false;
  EXPECT_EQ(Why(s, {4, 8, 8}), "simulation.fold is off");
  EXPECT_EQ(Why(Cluster(6, "{kind: leaf_spine, servers_per_leaf: 4}", kNvSwitch), {3, 16, 8}),
            "the last leaf holds 2 of 4 servers: its uplink differs");
  EXPECT_EQ(Why(Cluster(12, "{kind: leaf_spine, servers_per_leaf: 4}", kNvSwitch), {4, 24, 8}),
            "blocks of 3 servers sit unequally under leaves of 4");
  EXPECT_EQ(Why(Cluster(2, "{kind: single_switch}",
                        "      pcie: {gpus_per_switch: 2, bandwidth: \"16GB/s\"}\n"),
                {2, 8, 2}),
            "GPU-to-GPU traffic inside a server may cross the PCIe tree that network traffic "
            "uses");
}

TEST(Fold, RefusesTwoServerGroups) {
  Scenario s = Cluster(2, "{kind: single_switch}", kNvSwitch);
  s.cluster.groups.push_back(s.cluster.groups[0]);
  EXPECT_EQ(Why(s, {4, 8, 8}),
            "the cluster has 2 server groups, which may differ in GPUs or links");
}

TEST(Fold, BlocksFillWholeServers) {
  const Scenario s = Cluster(4, "{kind: rail_optimized}", kNvSwitch);
  const FoldDecision one_gpu = DecideFold(s, {32, 1, 1});  // pure data parallelism
  EXPECT_TRUE(one_gpu.fold);
  EXPECT_EQ(one_gpu.block_replicas, 8);
  EXPECT_EQ(one_gpu.block_gpus, 8);
  const FoldDecision big = DecideFold(s, {2, 16, 8});
  EXPECT_EQ(big.block_replicas, 1);
  EXPECT_EQ(big.block_gpus, 16);
  const FoldDecision off = DecideFold(s, {1, 32, 8});
  EXPECT_FALSE(off.fold);
  EXPECT_EQ(off.block_replicas, 1);
}

TEST(Fold, RepresentativesAreBlockZerosRanks) {
  EXPECT_EQ(FoldRepresentatives(6, 2), (std::vector<int>{0, 1, 0, 1, 0, 1}));
}

}  // namespace
}  // namespace stratasim
