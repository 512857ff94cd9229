// The grid of `stratasim sweep`: its points, the scenario at a point, and each bad grid's
// located error.
#include "core/sweep_grid.h"

#include <gtest/gtest.h>

#include <string>

#include "core/limits.h"

namespace stratasim {
namespace {

const char* kScenario = R"(name: tiny
cluster:
  servers:
    - name: s
      count: 2
      gpu: A100-SXM4-80GB
      gpus_per_server: 2
      nvswitch: {bandwidth: "300GB/s"}
      nics: {count: 2, bandwidth: "200Gb/s"}
  network: {kind: single_switch}
model: {preset: gpt2-medium}
training: {global_batch: 16, micro_batch: 4, precision: bf16}
strategies:
  - {name: ddp, kind: ddp}
)";

SweepGrid Grid(const std::string& text) {
  return SweepGrid::FromText(text, "grid.yaml", kScenario, "tiny.yaml");
}

std::string ErrorOf(const std::string& grid) {
  try {
    Grid(grid);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SweepGrid, PointsAreTheProductFirstKeyOutermost) {
  const SweepGrid g = Grid(
      "cluster.servers[0].count: [1, 2, 4]\n"
      "cluster.servers[0].nics.bandwidth: [\"100Gb/s\", \"200Gb/s\"]\n");
  ASSERT_EQ(g.num_points(), 6u);
  ASSERT_EQ(g.axes().size(), 2u);
  EXPECT_EQ(g.axes()[0].path, "cluster.servers[0].count");
  EXPECT_EQ(g.Values(0), (std::vector<std::string>{"1", "100Gb/s"}));
  EXPECT_EQ(g.Values(1), (std::vector<std::string>{"1", "200Gb/s"}));
  EXPECT_EQ(g.Values(5), (std::vector<std::string>{"4", "200Gb/s"}));
  const Scenario s = g.LoadPoint(5);
  EXPECT_EQ(s.cluster.NumGpus(), 8);
  EXPECT_EQ(s.cluster.groups[0].count, 4);
  EXPECT_EQ(g.LoadPoint(0).cluster.NumGpus(), 2);
}

TEST(SweepGrid, NewLeafKeysAndWholeMapsAreValues) {
  const SweepGrid g = Grid(
      "training.seed: [1, 2]\n"
      "model: [{preset: gpt2-medium}, {preset: gpt2-large}]\n");
  ASSERT_EQ(g.num_points(), 4u);
  EXPECT_EQ(g.Values(3)[1], "{preset: gpt2-large}");
  EXPECT_EQ(g.LoadPoint(3).model.preset, "gpt2-large");
  EXPECT_EQ(g.LoadPoint(3).training.seed, 2u);
}

TEST(SweepGrid, FingerprintFollowsBothTexts) {
  const std::string a = Grid("training.seed: [1, 2]\n").fingerprint();
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a, Grid("training.seed: [1, 2]\n").fingerprint());
  EXPECT_NE(a, Grid("training.seed: [1, 3]\n").fingerprint());
}

TEST(SweepGrid, UnknownIntermediateKeyIsLocatedInTheGrid) {
  EXPECT_EQ(ErrorOf("training.seed: [1]\ncluster.serverz[0].count: [2]\n"),
            "grid.yaml:2:1: cluster.serverz[0].count: unknown key path: the scenario has no key "
            "serverz in cluster (it has: servers, network); only the last key of a path may be "
            "one the scenario leaves out");
}

TEST(SweepGrid, ListIndexPastTheEnd) {
  EXPECT_EQ(ErrorOf("cluster.servers[1].count: [2]\n"),
            "grid.yaml:1:1: cluster.servers[1].count: unknown key path: index 1 is past the end "
            "of cluster.servers (1 items in the scenario)");
}

TEST(SweepGrid, LeafKeyTheLoaderRejects) {
  const std::string e = ErrorOf("training.global_bach: [8, 16]\n");
  EXPECT_EQ(e.rfind("grid.yaml:1:1: training.global_bach: unknown key (known: ", 0), 0u) << e;
}

TEST(SweepGrid, NotAKeyPath) {
  EXPECT_EQ(ErrorOf("cluster..servers: [1]\n"),
            "grid.yaml:1:1: cluster..servers: not a key path into the scenario: write names "
            "joined by dots, with [i] for a list item (e.g. cluster.servers[0].count)");
}

TEST(SweepGrid, EmptyList) {
  EXPECT_EQ(ErrorOf("training.seed: []\n"), "grid.yaml:1:16: training.seed: must not be empty");
}

TEST(SweepGrid, NonListValue) {
  EXPECT_EQ(ErrorOf("training.seed: 3\n"),
            "grid.yaml:1:16: training.seed = \"3\": must be a list, not a scalar");
}

TEST(SweepGrid, RepeatedKey) {
  EXPECT_EQ(ErrorOf("training.seed: [1]\ntraining.seed: [2]\n"),
            "grid.yaml:2:1: training.seed: duplicate key (first at line 1)");
}

TEST(SweepGrid, KeyInsideAnotherKey) {
  EXPECT_EQ(ErrorOf("model: [{preset: gpt2-medium}]\nmodel.preset: [gpt2-large]\n"),
            "grid.yaml:2:1: model.preset: lies inside grid key model (line 1): one would "
            "overwrite the other");
}

TEST(SweepGrid, WrongTypeIsLocatedAtTheGridValue) {
  // The second value, checked with the other key at its first value.
  const std::string e = ErrorOf("training.seed: [1, 2]\ncluster.servers[0].count: [2, many, 4]\n");
  EXPECT_EQ(e.rfind("grid.yaml:2:31: cluster.servers[0].count = \"many\": ", 0), 0u) << e;
  const std::string b = ErrorOf("cluster.servers[0].nics.bandwidth: [\"100Gb/s\", fast]\n");
  EXPECT_EQ(b.rfind("grid.yaml:1:48: cluster.servers[0].nics.bandwidth = \"fast\": ", 0), 0u) << b;
  const std::string p = ErrorOf("model.preset: [gpt2-medium, gpt9]\n");
  EXPECT_EQ(p.rfind("grid.yaml:1:29: model.preset = \"gpt9\": ", 0), 0u) << p;
}

TEST(SweepGrid, TooManyPoints) {
  std::string list = "[";
  for (int i = 0; i < 400; ++i) list += (i ? ", " : "") + std::to_string(i + 1);
  list += "]";
  const std::string e =
      ErrorOf("training.seed: " + list + "\ntraining.global_batch: " + list + "\n");
  EXPECT_EQ(e, "grid.yaml:2:1: training.global_batch: the grid has more than " +
                   std::to_string(limits::kMaxSweepPoints) +
                   " points up to this key (the product of the lists' lengths; docs/limits.md)");
}

TEST(SweepGrid, CombinationErrorsAreLeftToThePoint) {
  // 2 GPUs a server with 4 NICs breaks the scenario's rule, whichever value the grid gave the
  // other key: the grid is fine, the point fails, located in the scenario.
  const SweepGrid g = Grid("cluster.servers[0].gpus_per_server: [2, 3]\ntraining.seed: [1]\n");
  EXPECT_EQ(g.num_points(), 2u);
  EXPECT_NO_THROW(g.LoadPoint(0));
  try {
    g.LoadPoint(1);
    FAIL() << "point 1 loaded";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, "tiny.yaml") << e.what();
  }
}

}  // namespace
}  // namespace stratasim
