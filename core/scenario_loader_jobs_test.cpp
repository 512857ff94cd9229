// The `jobs:` and `placement:` sections (core/scenario_loader_jobs.cpp, docs/multi-job.md):
// what they read, and a located error for every bad input.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/scenario.h"
#include "core/scenario_test_util.h"

namespace stratasim {
namespace {

using testing::ErrorOf;
using testing::ExpectError;
using testing::Replace;

// Four servers of 4 GPUs; two jobs. Line numbers in the tests refer to this text.
const char kJobs[] = R"(name: shared
cluster:
  servers:
    - name: box
      count: 4
      gpu: A100-SXM4-80GB
      gpus_per_server: 4
      nvswitch: {bandwidth: "300GB/s"}
      nics: {count: 1, bandwidth: "200Gb/s"}
  network: {kind: leaf_spine, servers_per_leaf: 2, oversubscription: 2}
jobs:
  - name: gpt
    gpus: 8
    model: {preset: gpt2-small}
    training: {global_batch: 16, micro_batch: 2}
    strategy: {kind: 3d, options: {tensor: 2, stages: 2, data: 2}}
    arrival: 0s
  - name: resnet
    gpus: 4
    model: {kind: resnet50}
    training: {global_batch: 64}
    strategy: {kind: ddp}
    arrival: 250ms
placement: [packed, spread, topology-aware, ddlwmp]
)";

std::string Jobs(const std::string& from, const std::string& to) {
  return Replace(kJobs, from, to);
}

TEST(ScenarioJobs, ReadsJobsAndPolicies) {
  const Scenario s = LoadScenarioText(kJobs, "t.yaml");
  ASSERT_EQ(s.jobs.size(), 2u);
  EXPECT_TRUE(s.strategies.empty());
  EXPECT_EQ(s.jobs[0].name, "gpt");
  EXPECT_EQ(s.jobs[0].gpus, 8);
  EXPECT_EQ(s.jobs[0].model.preset, "gpt2-small");
  EXPECT_EQ(s.jobs[0].training.micro_batch, 2);
  EXPECT_EQ(s.jobs[0].strategy.name, "gpt");
  EXPECT_EQ(s.jobs[0].strategy.kind, "3d");
  EXPECT_EQ(s.jobs[0].strategy.options.at("stages").text, "2");
  EXPECT_EQ(s.jobs[0].arrival_s, 0);
  EXPECT_EQ(s.jobs[1].model.kind, "resnet50");
  EXPECT_DOUBLE_EQ(s.jobs[1].arrival_s, 0.25);
  ASSERT_EQ(s.placement.size(), 4u);
  EXPECT_EQ(s.placement[2].policy, "topology-aware");
  EXPECT_EQ(s.model.preset, "gpt2-small");  // the first job's, for what reads s.model
}

TEST(ScenarioJobs, UnknownPolicy) {
  ExpectError(ErrorOf(Jobs("spread, topology", "spread, random, topology")), 24, 29, "placement[2]",
              "unknown placement policy (known: packed, spread, topology-aware, ddlwmp)");
}

TEST(ScenarioJobs, PolicyListedTwice) {
  ExpectError(ErrorOf(Jobs("ddlwmp]", "ddlwmp, packed]")), 24, 53, "placement[4]",
              "policy listed twice");
}

TEST(ScenarioJobs, JobsNeedingMoreGpusThanTheCluster) {
  ExpectError(ErrorOf(Jobs("gpus: 4\n", "gpus: 12\n")), 19, 11, "jobs[1].gpus",
              "the jobs up to this one need 20 GPUs, the cluster has 16 (jobs hold their GPUs "
              "from the start, arrival or not)");
}

TEST(ScenarioJobs, GpusThatDoNotFitTheServers) {
  ExpectError(ErrorOf(Jobs("gpus: 4\n", "gpus: 6\n")), 19, 11, "jobs[1].gpus",
              "must be a multiple of the servers' 4 GPUs or divide it, so that the job plans on "
              "servers of this design");
}

TEST(ScenarioJobs, DuplicateNames) {
  ExpectError(ErrorOf(Jobs("name: resnet", "name: gpt")), 18, 11, "jobs[1].name",
              "duplicate job name (first at line 12)");
}

TEST(ScenarioJobs, BadArrival) {
  ExpectError(ErrorOf(Jobs("arrival: 250ms", "arrival: soon")), 23, 14, "jobs[1].arrival",
              "not a duration: no number (expected e.g. \"2us\", \"1.5ms\")");
  ExpectError(ErrorOf(Jobs("arrival: 250ms", "arrival: 90000s")), 23, 14, "jobs[1].arrival",
              "must be in [0s, 86400s]");
}

TEST(ScenarioJobs, EitherStrategiesOrJobs) {
  ExpectError(ErrorOf(Jobs("placement:", "strategies: [{name: d, kind: ddp}]\nplacement:")), 24, 1,
              "strategies",
              "a scenario with `jobs:` gives each job its own model, training and strategy; "
              "remove the top-level `strategies` (docs/multi-job.md)");
}

TEST(ScenarioJobs, PlacementNeedsJobs) {
  const std::string plain = R"(name: p
cluster:
  servers: [{name: b, gpu: A100-SXM4-80GB, gpus_per_server: 1}]
model: {preset: gpt2-small}
training: {global_batch: 8}
strategies: [{name: ddp, kind: ddp}]
placement: [packed]
)";
  ExpectError(ErrorOf(plain), 7, 1, "placement",
              "placement chooses where the jobs of a shared-cluster scenario run: it needs a "
              "`jobs:` list (docs/multi-job.md)");
}

TEST(ScenarioJobs, JobsNeedPlacement) {
  const ConfigError e = ErrorOf(Jobs("placement: [packed, spread, topology-aware, ddlwmp]\n", ""));
  EXPECT_EQ(e.key(), "placement");
}

}  // namespace
}  // namespace stratasim
