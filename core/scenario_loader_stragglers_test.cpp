// The loader's `cluster.stragglers` section and a strategy's `stragglers: off` (core/stragglers.h).
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "core/scenario.h"
#include "core/scenario_test_util.h"
#include "gtest/gtest.h"

namespace stratasim {
namespace {

using testing::ErrorOf;
using testing::ExpectError;
using testing::Replace;

// Two servers of 8 GPUs; STRAGGLERS (line 13) is replaced by each test.
const char kBase[] = R"(name: base
cluster:
  servers:
    - name: dgx
      count: 2
      gpu: A100-SXM4-80GB
      gpus_per_server: 8
      nvswitch: {bandwidth: "300GB/s", latency: "1us"}
      nics: {count: 8, bandwidth: "200Gb/s", latency: "1us"}
  network:
    kind: single_switch
    latency: "1us"
  stragglers: STRAGGLERS
model:
  preset: gpt2-medium
training:
  global_batch: 64
  micro_batch: 4
  seed: 9
strategies:
  - name: ddp
    kind: ddp
)";

std::string With(const std::string& stragglers) { return Replace(kBase, "STRAGGLERS", stragglers); }

TEST(StragglerLoader, ReadsEachKindOfEntry) {
  const Scenario s = LoadScenarioText(
      With("[{gpus: [3, 5], level: compute, factor: 2},\n"
           "    {servers: [1], level: server, factor: 1.5},\n"
           "    {gpus: [0], level: link, factor: 4},\n"
           "    {gpus: [1], level: compute, random: {distribution: uniform, min: 1, max: 2}},\n"
           "    {gpus: [2], level: compute, random: {distribution: lognormal, median: 1.1, "
           "sigma: 0.3}}]"),
      "t.yaml");
  const Stragglers& st = s.cluster.stragglers;
  ASSERT_EQ(st.entries.size(), 5u);
  EXPECT_EQ(st.seed, 9u);
  EXPECT_EQ(st.entries[0].ranks, (std::vector<int>{3, 5}));
  EXPECT_EQ(st.entries[0].level, StragglerLevel::kCompute);
  EXPECT_EQ(st.entries[0].factor, 2);
  EXPECT_EQ(st.entries[1].servers, (std::vector<int>{1}));
  EXPECT_EQ(st.entries[1].ranks, (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(st.entries[1].level, StragglerLevel::kServer);
  EXPECT_EQ(st.entries[2].level, StragglerLevel::kLink);
  EXPECT_EQ(st.entries[3].draw, StragglerDraw::kUniform);
  EXPECT_EQ(st.entries[3].max, 2);
  EXPECT_EQ(st.entries[4].draw, StragglerDraw::kLognormal);
  EXPECT_EQ(st.entries[4].sigma, 0.3);
  EXPECT_DOUBLE_EQ(st.SlowdownFactor(8, 0, StragglerLevel::kLink), 1.5);
  EXPECT_DOUBLE_EQ(st.SlowdownFactor(0, 0, StragglerLevel::kLink), 4);
  EXPECT_DOUBLE_EQ(st.SlowdownFactor(0, 0, StragglerLevel::kCompute), 1);
}

TEST(StragglerLoader, BadEntriesAreLocated) {
  auto error = [](const std::string& stragglers) { return ErrorOf(With(stragglers)); };
  ExpectError(error("[{gpus: [3], level: compute, factor: 2, speed: 1}]"), 13, 55,
              "cluster.stragglers[0].speed",
              "unknown key (known: gpus, servers, level, factor, random, trace)");
  ExpectError(error("[{gpus: [3], servers: [1], level: compute, factor: 2}]"), 13, 37,
              "cluster.stragglers[0].servers", "give gpus or servers, not both");
  ExpectError(error("[{level: compute, factor: 2}]"), 13, 16, "cluster.stragglers[0]",
              "needs gpus: [ranks] or servers: [indices]");
  ExpectError(error("[{gpus: [16], level: compute, factor: 2}]"), 13, 24,
              "cluster.stragglers[0].gpus[0]", "must be an integer in [0, 15]");
  ExpectError(error("[{servers: [2], level: server, factor: 2}]"), 13, 27,
              "cluster.stragglers[0].servers[0]", "must be an integer in [0, 1]");
  ExpectError(error("[{gpus: [3, 3], level: compute, factor: 2}]"), 13, 27,
              "cluster.stragglers[0].gpus[1]", "listed twice (first at line 13)");
  ExpectError(error("[{gpus: [3], level: compute, factor: 0.5}]"), 13, 52,
              "cluster.stragglers[0].factor",
              "must be a slowdown factor, a number in [1, 1000] (2: twice as slow)");
  ExpectError(error("[{gpus: [3], level: disk, factor: 2}]"), 13, 35, "cluster.stragglers[0].level",
              "must be one of: compute, link, server");
  ExpectError(error("[{gpus: [3], level: server, factor: 2}]"), 13, 35,
              "cluster.stragglers[0].level",
              "level server selects servers: write servers: [indices], not gpus");
  ExpectError(error("[{gpus: [3], level: compute}]"), 13, 16, "cluster.stragglers[0]",
              "needs one of factor, random or trace");
  ExpectError(error("[{gpus: [3], level: compute, factor: 2, trace: t.csv}]"), 13, 62,
              "cluster.stragglers[0].trace", "give one of factor, random or trace, not several");
  ExpectError(error("[{gpus: [3], level: link, random: {distribution: uniform, min: 1, max: 2}}]"),
              13, 49, "cluster.stragglers[0].random",
              "level link takes a fixed factor only (link bandwidths are set when the platform "
              "is built); use level compute for per-iteration factors");
  ExpectError(error("[{gpus: [3], level: compute, random: {distribution: normal}}]"), 13, 67,
              "cluster.stragglers[0].random.distribution", "must be one of: uniform, lognormal");
  ExpectError(
      error("[{gpus: [3], level: compute, random: {distribution: uniform, min: 2, max: 1.5}}]"), 13,
      89, "cluster.stragglers[0].random.max", "must be at least min (2)");
  ExpectError(error("[{gpus: [3], level: compute, random: {distribution: uniform, min: 1, max: 2, "
                    "sigma: 1}}]"),
              13, 99, "cluster.stragglers[0].random.sigma",
              "not a parameter of distribution uniform");
  ExpectError(error("[{gpus: [3], level: compute, random: {distribution: lognormal, median: 1.2, "
                    "sigma: -1}}]"),
              13, 98, "cluster.stragglers[0].random.sigma", "must be a number in [0, 10]");
  ExpectError(error("[{gpus: [3], level: compute, trace: missing.csv}]"), 13, 51,
              "cluster.stragglers[0].trace",
              "no such file: missing.csv (a path relative to the scenario file)");
}

TEST(StragglerLoader, TraceIsReadRelativeToTheScenarioAndBadLinesAreLocated) {
  const std::string dir =
      (std::filesystem::path(::testing::TempDir()) / "straggler_trace").lexically_normal().string();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/slow.csv") << "iteration,factor\n0,2\n2,3.5\n";
  std::ofstream(dir + "/bad.csv") << "0,2\n1,fast\n";
  std::ofstream(dir + "/s.yaml") << With("[{gpus: [4], level: compute, trace: slow.csv}]");
  std::ofstream(dir + "/b.yaml") << With("[{gpus: [4], level: compute, trace: bad.csv}]");
  const Scenario s = LoadScenarioFile(dir + "/s.yaml");
  ASSERT_EQ(s.cluster.stragglers.entries.size(), 1u);
  EXPECT_DOUBLE_EQ(s.cluster.stragglers.SlowdownFactor(4, 0, StragglerLevel::kCompute), 2);
  EXPECT_DOUBLE_EQ(s.cluster.stragglers.SlowdownFactor(4, 1, StragglerLevel::kCompute), 1);
  EXPECT_DOUBLE_EQ(s.cluster.stragglers.SlowdownFactor(4, 2, StragglerLevel::kCompute), 3.5);
  try {
    LoadScenarioFile(dir + "/b.yaml");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir + "/bad.csv:2:3: trace = \"1,fast\": factor must be a number in [1, 1000]");
  }
}

TEST(StragglerLoader, AStrategyMayRunWithoutThem) {
  const std::string text = With("[{gpus: [3], level: compute, factor: 2}]") +
                           "  - name: calm\n    kind: ddp\n    stragglers: off\n";
  const Scenario s = LoadScenarioText(text, "t.yaml");
  ASSERT_EQ(s.strategies.size(), 2u);
  EXPECT_FALSE(s.strategies[0].stragglers_off);
  EXPECT_TRUE(s.strategies[1].stragglers_off);
  EXPECT_EQ(ScenarioFor(s, s.strategies[0]).cluster.stragglers.entries.size(), 1u);
  EXPECT_TRUE(ScenarioFor(s, s.strategies[1]).cluster.stragglers.empty());
  EXPECT_EQ(DescribeOverrides(s, s.strategies[1]),
            (std::vector<std::string>{"stragglers = off (the scenario's: 1 entry)"}));
  ExpectError(ErrorOf(text + "  - name: odd\n    kind: ddp\n    stragglers: maybe\n"), 28, 17,
              "strategies[2].stragglers",
              "must be \"on\" (the default: the cluster's stragglers) or \"off\"");
}

}  // namespace
}  // namespace stratasim
