// Chakra execution traces end to end (docs/chakra.md): real plans exported and imported keep
// every task, dependency, size and collective, and simulate to the same iteration time; a trace
// published by ASTRA-sim runs through `stratasim run` in the time of a ring all-reduce.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "chakra/export.h"
#include "chakra/format.h"
#include "chakra/import.h"
#include "cli/run_scenario.h"
#include "core/link_efficiency.h"
#include "sim/collectives/protocol.h"
#include "sim/collectives/registry.h"
#include "sim/executor.h"
#include "strategies/plan.h"
#include "tests/cli_runner.h"
#include "tests/scenario_text.h"

namespace stratasim {
namespace {

namespace fs = std::filesystem;
using testing::RunCli;
using testing::Slurp;
using testing::TempDir;

const std::string kSource = STRATASIM_SOURCE_DIR;

void ExpectSameGraph(const TaskGraph& a, const TaskGraph& b) {
  ASSERT_EQ(a.num_ranks(), b.num_ranks());
  ASSERT_EQ(a.tasks().size(), b.tasks().size());
  EXPECT_EQ(a.streams(), b.streams());
  EXPECT_EQ(a.stream_priorities(), b.stream_priorities());
  for (size_t i = 0; i < a.tasks().size(); ++i) {
    const Task& x = a.tasks()[i];
    const Task& y = b.tasks()[i];
    SCOPED_TRACE("task " + std::to_string(i) + " '" + x.name.str() + "'");
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.rank, y.rank);
    EXPECT_EQ(x.stream, y.stream);
    EXPECT_EQ(x.iteration, y.iteration);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.phase, y.phase);
    EXPECT_EQ(x.op, y.op);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.category, y.category);
    EXPECT_EQ(x.deps, y.deps);
    EXPECT_EQ(x.flops, y.flops);
    EXPECT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(x.memory_delta_bytes, y.memory_delta_bytes);
    EXPECT_EQ(x.gemm.m, y.gemm.m);
    EXPECT_EQ(x.gemm.n, y.gemm.n);
    EXPECT_EQ(x.gemm.k, y.gemm.k);
    EXPECT_EQ(x.gemm.batch, y.gemm.batch);
    EXPECT_EQ(x.causal, y.causal);
    EXPECT_EQ(x.on_host, y.on_host);
    EXPECT_EQ(x.copy, y.copy);
    EXPECT_EQ(x.peer, y.peer);
    EXPECT_EQ(x.tag, y.tag);
    EXPECT_EQ(x.collective, y.collective);
    if (::testing::Test::HasFailure()) return;  // one task's differences, not thousands
  }
  ASSERT_EQ(a.collectives().size(), b.collectives().size());
  for (size_t i = 0; i < a.collectives().size(); ++i) {
    const Collective& x = a.collectives()[i];
    const Collective& y = b.collectives()[i];
    SCOPED_TRACE("collective " + std::to_string(i));
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.ranks, y.ranks);
    EXPECT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(x.matrix, y.matrix);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.root, y.root);
    EXPECT_EQ(x.algorithm, y.algorithm);
    EXPECT_EQ(x.members, y.members);
  }
}

// Writes the files of ExportChakra under `prefix`.
void WriteFiles(const chakra::ChakraFiles& files, const std::string& prefix) {
  for (size_t r = 0; r < files.ranks.size(); ++r) {
    std::ofstream(chakra::RankFile(prefix, static_cast<int>(r)), std::ios::binary)
        << files.ranks[r];
  }
  std::ofstream(chakra::CommGroupsFile(prefix)) << files.comm_groups;
}

struct RoundTripCase {
  std::string kind;
  std::string options;
  std::string model;
};

void PrintTo(const RoundTripCase& c, std::ostream* os) { *os << c.kind << " " << c.options; }

class ChakraRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(ChakraRoundTrip, KeepsTheGraphAndItsTime) {
  const RoundTripCase& c = GetParam();
  Scenario s = LoadScenarioText("name: rt\n" + testing::TwoA100Servers(4) + c.model +
                                    "training: {global_batch: 16, micro_batch: 2, iterations: "
                                    "{warmup: 1, measured: 2}}\nstrategies:\n  - {name: s, kind: " +
                                    c.kind + ", options: " + c.options + "}\n",
                                "rt.yaml");
  s.simulation.fold = false;
  const Plan plan = PlanStrategy(s, s.strategies.at(0));
  const fs::path dir = TempDir("chakra", c.kind);
  const std::string prefix = (dir / "s").string();
  const chakra::ChakraFiles files = chakra::ExportChakra(plan.graph);
  EXPECT_EQ(files.nodes, static_cast<long long>(plan.graph.tasks().size()));
  WriteFiles(files, prefix);

  chakra::ImportOptions o;
  o.cluster = &s.cluster;
  o.simulation = &s.simulation;
  o.iterations = 3;
  const TaskGraph back = chakra::ImportChakra(prefix, o);
  ExpectSameGraph(plan.graph, back);

  const ExecutionTrace ran = sim::Simulate(plan.graph, s.cluster, s.simulation);
  const ExecutionTrace replayed = sim::Simulate(back, s.cluster, s.simulation);
  EXPECT_GT(ran.makespan_s, 0);
  EXPECT_EQ(replayed.makespan_s, ran.makespan_s);
  const StrategySpec& spec = s.strategies.at(0);
  EXPECT_EQ(Evaluate(s, spec, back, replayed, plan.samples_per_iteration, plan.tokens_per_sample)
                .metrics.iteration_time_s,
            Evaluate(s, spec, plan.graph, ran, plan.samples_per_iteration, plan.tokens_per_sample)
                .metrics.iteration_time_s);
  fs::remove_all(dir);
}

const char kGpt2[] = "model: {preset: gpt2-medium}\n";

INSTANTIATE_TEST_SUITE_P(
    Plans, ChakraRoundTrip,
    ::testing::Values(RoundTripCase{"ddp", "{}", kGpt2},
                      RoundTripCase{"3d", "{tensor: 2, stages: 2, data: 2}", kGpt2},
                      RoundTripCase{"zero3", "{}", kGpt2},
                      RoundTripCase{"deepspeed-moe", "{}", testing::kSmallMoeModel}),
    [](const auto& info) {
      std::string n = info.param.kind;
      for (char& ch : n) {
        if (ch == '-') ch = '_';
      }
      return n;
    });

// ASTRA-sim's published 4-GPU, 1 MiB all-reduce (chakra/testdata/README.md) through
// `stratasim run`: each of the three iterations is one ring all-reduce, whose alpha-beta time
// on one NVSwitch server is T = base + 2 (N - 1) (step + alpha + S / (N B)) with N = 4 ranks,
// S = 1 MiB, B = 300 GB/s x 0.8 achieved and alpha = two switch-port latencies (tests/
// collectives_closed_form_test.cpp derives it).
TEST(ChakraThirdParty, AstraSimAllReduceRunsInTheRingTime) {
  const std::string scenario = kSource + "/scenarios/chakra-allreduce.yaml";
  const int n = 4;
  const double bytes = 1 << 20;
  // The scenario gives the NVSwitch's line rate; data moves at NCCL's per-link figure for A100,
  // 20 of 25 GB/s (core/link_efficiency.h).
  const double link_Bps = 300e9 * DefaultLinkEfficiency(LinkKind::kNvSwitch, "A100-SXM4-80GB");
  const auto nccl = sim::FindCollectiveAlgorithm(CollectiveKind::kAllReduce, "ring").nccl;
  const double expected =
      sim::BaseLatencySeconds(nccl, sim::Protocol::kSimple) +
      2.0 * (n - 1) *
          (sim::StepLatencySeconds(nccl, sim::Protocol::kSimple, sim::HopKind::kNvLink) + 2e-6 +
           bytes / (n * link_Bps));

  // In process: the imported graph is three all-reduces of every rank, one per iteration.
  const Scenario s = LoadScenarioFile(scenario);
  const Plan plan = PlanStrategy(s, s.strategies.at(0));
  ASSERT_EQ(plan.graph.num_ranks(), 4);
  ASSERT_EQ(plan.graph.collectives().size(), 3u);
  for (const Collective& c : plan.graph.collectives()) {
    EXPECT_EQ(c.kind, CollectiveKind::kAllReduce);
    EXPECT_EQ(c.bytes, bytes);
    EXPECT_EQ(c.ranks, (std::vector<int>{0, 1, 2, 3}));
  }
  const ExecutionTrace t = sim::Simulate(plan.graph, s.cluster, s.simulation);
  EXPECT_NEAR(t.makespan_s, 3 * expected, 0.01 * 3 * expected);

  // Through the program.
  const fs::path out = TempDir("chakra", "third-party");
  const testing::CliResult r = RunCli("run " + scenario + " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json results = nlohmann::json::parse(Slurp(out / "results.json"));
  const nlohmann::json& st = results["strategies"][0];
  EXPECT_EQ(st["kind"], "chakra");
  EXPECT_NEAR(st["iteration_time_s"].get<double>(), expected, 0.01 * expected);
  fs::remove_all(out);
}

// `stratasim chakra-export` writes one file per rank and the groups; the files import to the
// plan of the strategy it names.
TEST(ChakraExportCommand, WritesOneFilePerRank) {
  const std::string scenario = kSource + "/scenarios/quickstart.yaml";
  const fs::path out = TempDir("chakra", "export");
  const testing::CliResult r =
      RunCli("chakra-export " + scenario + " --strategy ddp-no-overlap --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  for (int rank = 0; rank < 16; ++rank) {
    EXPECT_TRUE(fs::exists(chakra::RankFile((out / "ddp-no-overlap").string(), rank))) << rank;
  }
  EXPECT_FALSE(fs::exists(chakra::RankFile((out / "ddp-no-overlap").string(), 16)));
  const nlohmann::json groups =
      nlohmann::json::parse(Slurp(chakra::CommGroupsFile((out / "ddp-no-overlap").string())));
  EXPECT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups["1"].size(), 16u);

  Scenario s = LoadScenarioFile(scenario);
  s.simulation.fold = false;
  const StrategySpec* spec = nullptr;
  for (const StrategySpec& st : s.strategies) {
    if (st.name == "ddp-no-overlap") spec = &st;
  }
  ASSERT_NE(spec, nullptr);
  chakra::ImportOptions o;
  o.cluster = &s.cluster;
  o.simulation = &s.simulation;
  o.iterations = s.training.warmup_iterations + s.training.measured_iterations;
  ExpectSameGraph(PlanStrategy(s, *spec).graph, chakra::ImportChakra(out.string(), o));

  const testing::CliResult several = RunCli("chakra-export " + scenario + " --out " + out.string());
  EXPECT_EQ(several.status, 2);
  EXPECT_NE(several.output.find(scenario +
                                " has several strategies (ddp-overlap-25MiB, ddp-overlap-100MiB, "
                                "ddp-no-overlap): choose one with --strategy"),
            std::string::npos)
      << several.output;
  const testing::CliResult unknown =
      RunCli("chakra-export " + scenario + " --strategy nope --out " + out.string());
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.output.find("--strategy nope: no such strategy in " + scenario),
            std::string::npos)
      << unknown.output;
  fs::remove_all(out);
}

// The kind's option errors are located in the scenario.
TEST(ChakraStrategy, TracesThatDoNotExist) {
  const Scenario s = LoadScenarioText(
      "name: x\n" + testing::TwoA100Servers(4) +
          "model: {preset: gpt2-medium}\ntraining: {global_batch: 16, micro_batch: 2}\n"
          "strategies:\n  - {name: s, kind: chakra, options: {traces: nowhere/t}}\n",
      "/tmp/x.yaml");
  try {
    PlanStrategy(s, s.strategies.at(0));
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "/tmp/x.yaml:14:47: strategies[0].options.traces = \"nowhere/t\": no such file: "
              "/tmp/nowhere/t.0.et (the prefix is relative to the scenario file)");
  }
}

}  // namespace
}  // namespace stratasim
