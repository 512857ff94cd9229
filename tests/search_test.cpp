// `stratasim search` end to end (issue 24): on a cluster small enough to simulate every plan
// of the space, the best plan the search finds (the best of the analytic top K, simulated) is
// the true best; the command's outputs do not depend on -j.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cli/search_command.h"
#include "search/search_report.h"
#include "search/search_spec.h"
#include "tests/cli_runner.h"

namespace stratasim {
namespace {

// 2 DGX-like servers of 8 A100s with two 100 Gb/s NICs each (a slow network, so that where
// the data-parallel traffic goes matters), GPT-3 1.3B, and a space of 34 plans.
constexpr char kSmallSearch[] = R"(name: small-search
cluster:
  servers:
    - name: box
      count: 2
      gpu: A100-SXM4-80GB
      gpus_per_server: 8
      nvswitch: {bandwidth: "300GB/s", latency: "1us"}
      nics: {count: 2, bandwidth: "100Gb/s", latency: "2us"}
  network: {kind: single_switch, latency: "1us"}
model: {preset: gpt3-1.3b}
training:
  global_batch: 64
  micro_batch: 1
  iterations: {warmup: 0, measured: 1}
search:
  tensor: [1, 2, 4]
  pipeline: [1, 2, 4]
  micro_batch: [1, 2]
  schedule: [1f1b]
  recompute: [none]
  sequence_parallel: [false]
  zero: [none, distributed_optimizer]
  top_k: 5
)";

TEST(SearchTest, TheBestOfTheAnalyticTopKIsTheTrueBestOnASmallCluster) {
  const search::SearchScenario ss = search::LoadSearchScenarioText(kSmallSearch, "small.yaml");
  search::SearchOutcome o = search::RankPlans(ss.scenario, ss.search);
  ASSERT_GT(o.ranked.size(), static_cast<size_t>(ss.search.top_k));
  // Simulate every plan that survived pruning.
  SimulateBest(ss.scenario, static_cast<int>(o.ranked.size()), 2, &o);
  const search::RankedPlan* best = nullptr;
  for (const search::RankedPlan& p : o.ranked) {
    ASSERT_TRUE(p.simulated && p.simulated->ok) << p.name << ": " << p.simulated->error;
    if (best == nullptr ||
        p.simulated->metrics.iteration_time_s < best->simulated->metrics.iteration_time_s) {
      best = &p;
    }
  }
  std::string ranks;
  for (const search::RankedPlan* p : search::SimulatedByTime(o)) {
    ranks += p->name + " analytic rank " + std::to_string(p->analytic_rank) + ", simulated " +
             std::to_string(p->simulated->metrics.iteration_time_s) + " s, analytic " +
             std::to_string(p->estimate.iteration_s) + " s\n";
  }
  EXPECT_LE(best->analytic_rank, ss.search.top_k) << ranks;
}

TEST(SearchTest, CommandWritesTheSameFilesAtAnyJobCount) {
  namespace fs = std::filesystem;
  const fs::path dir = testing::TempDir("search", "jobs");
  { std::ofstream(dir / "small.yaml") << kSmallSearch; }
  const std::string scenario = (dir / "small.yaml").string();
  const testing::CliResult one =
      testing::RunCli("search " + scenario + " -j 1 --top-k 3 --out " + (dir / "j1").string());
  ASSERT_EQ(one.status, 0) << one.output;
  EXPECT_NE(one.output.find("simulated the best 3 with contention"), std::string::npos)
      << one.output;
  EXPECT_NE(one.output.find("best: "), std::string::npos) << one.output;
  const testing::CliResult two =
      testing::RunCli("search " + scenario + " -j 2 --top-k 3 --out " + (dir / "j2").string());
  ASSERT_EQ(two.status, 0) << two.output;
  for (const char* f : {"search.json", "search.csv", "pareto.csv"}) {
    const std::string a = testing::Slurp(dir / "j1" / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_EQ(a, testing::Slurp(dir / "j2" / f)) << f;
  }
  fs::remove_all(dir);
}

TEST(SearchTest, BadJobsAndTopKAreUsageErrors) {
  namespace fs = std::filesystem;
  const fs::path dir = testing::TempDir("search", "usage");
  { std::ofstream(dir / "small.yaml") << kSmallSearch; }
  const std::string scenario = (dir / "small.yaml").string();
  const testing::CliResult jobs = testing::RunCli("search " + scenario + " -j 0");
  EXPECT_EQ(jobs.status, 2) << jobs.output;
  EXPECT_NE(jobs.output.find("--jobs 0: must be in [1, 256]"), std::string::npos) << jobs.output;
  const testing::CliResult k = testing::RunCli("search " + scenario + " --top-k 1001");
  EXPECT_EQ(k.status, 2) << k.output;
  EXPECT_NE(k.output.find("--top-k 1001: must be in [0, 1000]"), std::string::npos) << k.output;
  EXPECT_FALSE(fs::exists(dir / "stratasim-out"));
  fs::remove_all(dir);
}

TEST(SearchTest, RunRefusesASearchScenario) {
  namespace fs = std::filesystem;
  const fs::path dir = testing::TempDir("search", "run");
  { std::ofstream(dir / "small.yaml") << kSmallSearch; }
  const testing::CliResult r = testing::RunCli("run " + (dir / "small.yaml").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("stratasim search"), std::string::npos) << r.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace stratasim
