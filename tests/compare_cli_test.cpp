// `stratasim compare` and `stratasim run`'s trace options through the program (issue 25).
//
// The compare golden: two results folders committed under tests/compare/ (quickstart.yaml as
// bundled, and the same with its NICs at half the bandwidth, each run with
//   build/cli/stratasim run tests/compare/X/quickstart.yaml --out tests/compare/X --no-traces
// from the source folder), compared, against tests/golden/compare.txt. If the output is meant
// to change, regenerate it with
//   STRATASIM_UPDATE_GOLDEN=1 build/tests/compare_cli_test --gtest_filter='CompareCli.Golden*'
// and commit it saying why.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "report/atomic_file.h"
#include "report/gzip_stream.h"
#include "tests/cli_runner.h"

namespace stratasim {
namespace {

namespace fs = std::filesystem;
using testing::RunCli;
using testing::RunCommand;
using testing::Slurp;
using testing::TempDir;

const std::string kSource = STRATASIM_SOURCE_DIR;
const std::string kBinary = STRATASIM_BINARY;

// Runs stratasim from the source folder, so that the fixtures' relative paths read as committed.
testing::CliResult InSource(const std::string& args) {
  return RunCommand("cd " + kSource + " && " + kBinary + " " + args);
}

TEST(CompareCli, GoldenTextAndRegressionStatus) {
  const auto r = InSource("compare tests/compare/a tests/compare/b");
  const std::string golden = kSource + "/tests/golden/compare.txt";
  if (std::getenv("STRATASIM_UPDATE_GOLDEN") != nullptr) {
    WriteFileAtomically(golden, r.output);
  }
  EXPECT_EQ(r.output, Slurp(golden))
      << "compare's output changed. If that is meant, see this test's header.";
  // Halving the NICs' bandwidth slows DDP past 5%: a regression.
  EXPECT_EQ(r.status, 1) << r.output;
}

TEST(CompareCli, ThresholdDecidesTheStatus) {
  EXPECT_EQ(InSource("compare tests/compare/a tests/compare/b --threshold 1000").status, 0);
  // The other way round B is faster: improvements only.
  const auto back = InSource("compare tests/compare/b tests/compare/a");
  EXPECT_EQ(back.status, 0) << back.output;
  EXPECT_NE(back.output.find("improved"), std::string::npos) << back.output;
  // A run against itself, named by its results.json.
  EXPECT_EQ(InSource("compare tests/compare/a/results.json tests/compare/a").status, 0);
  // Judging only the peak memory, which the NICs do not change.
  EXPECT_EQ(
      InSource("compare tests/compare/a tests/compare/b --metric max_peak_memory_bytes").status, 0);
}

TEST(CompareCli, JsonOutput) {
  const fs::path dir = TempDir("compare", "json");
  const auto r =
      InSource("compare tests/compare/a tests/compare/b --json " + (dir / "c.json").string());
  ASSERT_EQ(r.status, 1) << r.output;
  const auto j = nlohmann::json::parse(Slurp(dir / "c.json"));
  EXPECT_EQ(j["format"], "stratasim-compare");
  EXPECT_FALSE(j["regressions"].empty());
  EXPECT_EQ(j["scenario_file_keys"][0]["key"], "cluster.servers[0].nics.bandwidth");
  fs::remove_all(dir);
}

TEST(CompareCli, BadInputsAreNamed) {
  const fs::path dir = TempDir("compare", "bad");
  auto run = [&](const std::string& args) { return RunCli("compare " + args); };
  const std::string a = kSource + "/tests/compare/a";

  auto missing = run((dir / "nowhere").string() + " " + a);
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.output.find((dir / "nowhere").string() + ": "), std::string::npos)
      << missing.output;

  auto empty_folder = run(dir.string() + " " + a);
  EXPECT_EQ(empty_folder.status, 2);
  EXPECT_NE(empty_folder.output.find((dir / "results.json").string()), std::string::npos)
      << empty_folder.output;

  std::ofstream(dir / "links.json") << "{\"format\": \"stratasim-links\", \"version\": 1}\n";
  auto links = run((dir / "links.json").string() + " " + a);
  EXPECT_EQ(links.status, 2);
  EXPECT_NE(links.output.find((dir / "links.json").string() +
                              ": format = \"stratasim-links\": must be \"stratasim-results\""),
            std::string::npos)
      << links.output;

  std::ofstream(dir / "text.json") << "not json\n";
  auto text = run(a + " " + (dir / "text.json").string());
  EXPECT_EQ(text.status, 2);
  EXPECT_NE(text.output.find((dir / "text.json").string() + ": <document>: not JSON"),
            std::string::npos)
      << text.output;

  auto threshold = run(a + " " + a + " --threshold -1");
  EXPECT_EQ(threshold.status, 2);
  EXPECT_NE(threshold.output.find("--threshold must be a percentage >= 0"), std::string::npos)
      << threshold.output;

  auto metric = run(a + " " + a + " --metric speed");
  EXPECT_EQ(metric.status, 2);
  EXPECT_NE(metric.output.find("--metric speed: not a figure compare knows; they are: "
                               "iteration_time_s"),
            std::string::npos)
      << metric.output;

  auto one = run(a);
  EXPECT_EQ(one.status, 2);
  EXPECT_NE(one.output.find("stratasim compare: "), std::string::npos) << one.output;
  fs::remove_all(dir);
}

// One strategy of quickstart (16 GPUs, 3 iterations: simulated whole).
std::string RunQuickstart(const fs::path& out, const std::string& extra) {
  const auto r =
      RunCli("run " + kSource + "/scenarios/quickstart.yaml -s ddp-overlap-25MiB -j 1 --out " +
             out.string() + " " + extra);
  EXPECT_EQ(r.status, 0) << r.output;
  return r.output;
}

TEST(TraceCli, TraceGpusShrinksTheTrace) {
  const fs::path dir = TempDir("trace", "gpus");
  RunQuickstart(dir / "all", "");
  RunQuickstart(dir / "two", "--trace-gpus 0,8");
  // The GPUs' events (the "Links" process, pid 16, is the same in both): 2 of 16 GPUs hold
  // about an eighth of them.
  const auto gpu_bytes = [](const std::string& text) {
    size_t n = 0;
    const auto trace = nlohmann::json::parse(text);
    for (const auto& e : trace["traceEvents"]) {
      if (e["pid"] != 16) n += e.dump().size();
    }
    return n;
  };
  const auto all = gpu_bytes(Slurp(dir / "all" / "ddp-overlap-25MiB.trace.json"));
  const auto two = gpu_bytes(Slurp(dir / "two" / "ddp-overlap-25MiB.trace.json"));
  EXPECT_LT(two * 6, all) << two << " of " << all;
  EXPECT_LT(fs::file_size(dir / "two" / "ddp-overlap-25MiB.trace.json") * 2,
            fs::file_size(dir / "all" / "ddp-overlap-25MiB.trace.json"));
  const auto j = nlohmann::json::parse(Slurp(dir / "two" / "ddp-overlap-25MiB.trace.json"));
  for (const auto& e : j["traceEvents"]) {
    ASSERT_TRUE(e["pid"] == 0 || e["pid"] == 8 || e["pid"] == 16) << e.dump();
  }
  // The results do not depend on what the trace shows.
  EXPECT_EQ(Slurp(dir / "all" / "results.json"), Slurp(dir / "two" / "results.json"));

  const auto bad = RunCli("run " + kSource + "/scenarios/quickstart.yaml --trace-gpus 0-16 --out " +
                          (dir / "bad").string());
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("stratasim run: --trace-gpus 0-16: GPU 16 is not in the cluster (the "
                            "cluster has 16 GPUs, 0-15)"),
            std::string::npos)
      << bad.output;
  EXPECT_FALSE(fs::exists(dir / "bad"));
  fs::remove_all(dir);
}

TEST(TraceCli, GzipRoundTripsAndIsByteIdentical) {
  const fs::path dir = TempDir("trace", "gzip");
  RunQuickstart(dir / "plain", "");
  const std::string out = RunQuickstart(dir / "gz1", "--trace-format json.gz");
  RunQuickstart(dir / "gz2", "--trace-format json.gz");
  EXPECT_NE(out.find("<strategy>.trace.json.gz"), std::string::npos) << out;
  const std::string plain = Slurp(dir / "plain" / "ddp-overlap-25MiB.trace.json");
  const std::string gz = Slurp(dir / "gz1" / "ddp-overlap-25MiB.trace.json.gz");
  EXPECT_FALSE(fs::exists(dir / "gz1" / "ddp-overlap-25MiB.trace.json"));
  EXPECT_EQ(GzipDecompress(gz), plain);
  EXPECT_LT(gz.size() * 5, plain.size()) << gz.size() << " of " << plain.size();
  EXPECT_EQ(Slurp(dir / "gz2" / "ddp-overlap-25MiB.trace.json.gz"), gz);

  const auto bad = RunCli("run " + kSource + "/scenarios/quickstart.yaml --trace-format pb --out " +
                          (dir / "bad").string());
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("stratasim run: --trace-format pb: must be json or json.gz"),
            std::string::npos)
      << bad.output;
  fs::remove_all(dir);
}

// An MoE run of 5 iterations (more than kStreamedIterationsHeld: streamed when its planner adds
// iterations in order, and then its child writes the trace, gzip'd and for the chosen GPUs, and
// sends back the MoE per-GPU load series over the wire).
TEST(TraceCli, StreamedMoeRunGzipAndGpuLoad) {
  const fs::path dir = TempDir("trace", "moe");
  std::string yaml = Slurp(kSource + "/scenarios/moe-commodity-s.yaml");
  const std::string from = "iterations: {warmup: 1, measured: 100}";
  const size_t at = yaml.find(from);
  ASSERT_NE(at, std::string::npos);
  yaml.replace(at, from.size(), "iterations: {warmup: 1, measured: 4}");
  std::ofstream(dir / "moe.yaml") << yaml;
  const auto r =
      RunCli("run " + (dir / "moe.yaml").string() + " -j 1 --out " + (dir / "out").string() +
             " --trace-format json.gz --trace-gpus 1 -s pro-prophet-top1");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto results = nlohmann::json::parse(Slurp(dir / "out" / "results.json"));
  const auto& s = results["strategies"][0];
  const auto& rows = s["moe"]["gpu_tokens_per_iteration"];
  ASSERT_EQ(rows.size(), 4u) << s["moe"].dump();
  for (const auto& row : rows) EXPECT_EQ(row.size(), static_cast<size_t>(s["num_gpus"]));
  const auto trace = nlohmann::json::parse(
      GzipDecompress(Slurp(dir / "out" / (s["name"].get<std::string>() + ".trace.json.gz"))));
  const int links_pid = s["num_gpus"].get<int>();  // the "Links" process
  for (const auto& e : trace["traceEvents"]) {
    ASSERT_TRUE(e["pid"] == 1 || e["pid"] == links_pid) << e.dump();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace stratasim
