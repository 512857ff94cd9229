// The stratasim program end to end: outputs, determinism, exit codes and error messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>

#include "tests/cli_runner.h"

namespace {

namespace fs = std::filesystem;

using stratasim::testing::RunCli;
using stratasim::testing::Slurp;
using Result = stratasim::testing::CliResult;

fs::path TempDir(const std::string& name) { return stratasim::testing::TempDir("cli-test", name); }

const std::string kQuickstart = std::string(STRATASIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";

TEST(Cli, QuickstartWritesAllOutputsAndPrintsTheTable) {
  const fs::path out = TempDir("quick");
  const Result r = RunCli("run " + kQuickstart + " --out " + out.string() + " --write-graphs");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("samples/s"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(out / "results.json"));
  EXPECT_TRUE(fs::exists(out / "results.csv"));
  EXPECT_TRUE(fs::exists(out / "ddp-overlap-25MiB.trace.json"));
  EXPECT_TRUE(fs::exists(out / "ddp-overlap-25MiB.graph.json"));
  for (const auto& e : fs::directory_iterator(out)) {
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << "temp file left behind";
  }
  // A written graph replays to the same iteration time.
  const Result replay =
      RunCli("replay " + kQuickstart + " " + (out / "ddp-overlap-25MiB.graph.json").string() +
             " --out " + (out / "replay").string());
  ASSERT_EQ(replay.status, 0) << replay.output;
  const nlohmann::json ran = nlohmann::json::parse(Slurp(out / "results.json"));
  const nlohmann::json replayed = nlohmann::json::parse(Slurp(out / "replay" / "results.json"));
  ASSERT_EQ(ran["strategies"][0]["name"], "ddp-overlap-25MiB");
  ASSERT_EQ(replayed["strategies"][0]["name"], "replay");
  const double ran_s = ran["strategies"][0]["iteration_time_s"].get<double>();
  EXPECT_GT(ran_s, 0);
  EXPECT_EQ(replayed["strategies"][0]["iteration_time_s"].get<double>(), ran_s);
  // links.json beside results.json, for the run and the replay alike: the same simulation
  // loads the same links.
  const nlohmann::json ran_links = nlohmann::json::parse(Slurp(out / "links.json"));
  const nlohmann::json replayed_links = nlohmann::json::parse(Slurp(out / "replay" / "links.json"));
  EXPECT_EQ(ran_links["format"], "stratasim-links");
  ASSERT_EQ(ran_links["strategies"].size(), ran["strategies"].size());
  EXPECT_EQ(ran_links["strategies"][0]["name"], "ddp-overlap-25MiB");
  EXPECT_FALSE(ran_links["strategies"][0]["usage"]["links"].empty());
  EXPECT_EQ(replayed_links["strategies"][0]["usage"], ran_links["strategies"][0]["usage"]);
  EXPECT_NE(r.output.find("links.json"), std::string::npos) << r.output;
  fs::remove_all(out);
}

TEST(Cli, NoTracesLeavesTheChromeTracesOut) {
  const fs::path out = TempDir("no-traces");
  const Result r =
      RunCli("run " + kQuickstart + " -s ddp-no-overlap --no-traces --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(fs::exists(out / "results.json"));
  EXPECT_FALSE(fs::exists(out / "ddp-no-overlap.trace.json"));
  EXPECT_EQ(r.output.find("trace.json"), std::string::npos) << r.output;
  fs::remove_all(out);
}

TEST(Cli, SameScenarioTwiceGivesByteIdenticalResults) {
  const fs::path a = TempDir("det-a"), b = TempDir("det-b");
  ASSERT_EQ(RunCli("run " + kQuickstart + " --out " + a.string()).status, 0);
  ASSERT_EQ(RunCli("run " + kQuickstart + " --out " + b.string()).status, 0);
  const std::string ja = Slurp(a / "results.json");
  EXPECT_FALSE(ja.empty());
  EXPECT_EQ(ja, Slurp(b / "results.json"));
  EXPECT_EQ(Slurp(a / "results.csv"), Slurp(b / "results.csv"));
  EXPECT_EQ(Slurp(a / "links.json"), Slurp(b / "links.json"));
  EXPECT_EQ(Slurp(a / "ddp-no-overlap.trace.json"), Slurp(b / "ddp-no-overlap.trace.json"));
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST(Cli, BadScenarioExitsTwoNamingFileLineAndKey) {
  const fs::path d = TempDir("bad");
  const fs::path file = d / "bad.yaml";
  std::ofstream(file) << "name: bad\ncluster:\n  servers:\n    - name: a\n      count: 1\n"
                         "      gpu: A100-SXM4-80GB\n      gpus_per_server: 1\n"
                         "      nics: {count: 1, bandwidth: \"-5GB/s\"}\n"
                         "model: {preset: gpt2-small}\ntraining: {global_batch: 8}\n"
                         "strategies: [{name: d, kind: ddp}]\n";
  const Result r = RunCli("run " + file.string() + " --out " + (d / "out").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("bad.yaml:8:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cluster.servers[0].nics.bandwidth"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("negative"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(d / "out" / "results.json"));
  fs::remove_all(d);
}

TEST(Cli, UnknownStrategyOptionExitsTwo) {
  const fs::path d = TempDir("opt");
  const fs::path file = d / "opt.yaml";
  std::ofstream(file) << "name: opt\ncluster:\n  servers:\n    - name: a\n      count: 1\n"
                         "      gpu: A100-SXM4-80GB\n      gpus_per_server: 1\n"
                         "model: {preset: gpt2-small}\ntraining: {global_batch: 8}\n"
                         "strategies:\n  - name: d\n    kind: ddp\n"
                         "    options: {bucket_sise: \"25MiB\"}\n";
  const Result r = RunCli("run " + file.string() + " --out " + (d / "out").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("strategies[0].options.bucket_sise"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("unknown option"), std::string::npos) << r.output;
  fs::remove_all(d);
}

TEST(Cli, CollectivePrintsTheNcclTestsTable) {
  const fs::path d = TempDir("coll");
  const Result r = RunCli("collective " + kQuickstart + " -b 1M -e 64M -f 4 --json " +
                          (d / "sweep.json").string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("algbw"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("busbw"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("     1048576"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("    67108864"), std::string::npos) << r.output;
  const std::string json = Slurp(d / "sweep.json");
  EXPECT_NE(json.find("\"busbw_Bps\""), std::string::npos) << json;
  // A forced algorithm shows in the last column; a wrong one is a usage error.
  const Result ring = RunCli("collective " + kQuickstart + " -b 1G -e 1G -a ring -p simple");
  ASSERT_EQ(ring.status, 0) << ring.output;
  EXPECT_NE(ring.output.find("ring/simple/"), std::string::npos) << ring.output;
  const Result bad = RunCli("collective " + kQuickstart + " -c broadcast -a hierarchical");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("--algorithm hierarchical: broadcast has: auto ring tree"),
            std::string::npos)
      << bad.output;
  const Result op = RunCli("collective " + kQuickstart + " -c allreduce");
  EXPECT_EQ(op.status, 2);
  EXPECT_NE(op.output.find("--op allreduce: not a collective"), std::string::npos) << op.output;
  fs::remove_all(d);
}

// nccl-tests' sendrecv_perf: one row per size, busbw = algbw, "p2p" in the algorithm column,
// the same rows in the JSON, byte-identical on a second run.
// Taking the executor's activities off SimGrid's maestro list (sim/maestro_list.h) changes
// how fast a simulation runs, not what it computes: a step-fidelity sweep (rings, trees and
// direct flows, thousands of Comms in flight) gives byte-identical rows with it disabled.
TEST(Cli, MaestroListTrimChangesNoResult) {
  const fs::path d = TempDir("trim");
  const std::string args =
      "collective " + kQuickstart + " -b 64K -e 256M -f 16 --fidelity step --json ";
  const Result on = RunCli(args + (d / "on.json").string());
  setenv("STRATASIM_SIMGRID_TRIM", "0", 1);
  const Result off = RunCli(args + (d / "off.json").string());
  unsetenv("STRATASIM_SIMGRID_TRIM");
  ASSERT_EQ(on.status, 0) << on.output;
  ASSERT_EQ(off.status, 0) << off.output;
  EXPECT_EQ(on.output, off.output);
  EXPECT_EQ(Slurp(d / "on.json"), Slurp(d / "off.json"));
}

TEST(Cli, CollectiveSendRecvPrintsP2pRowsDeterministically) {
  const fs::path d = TempDir("sendrecv");
  const std::string args = "collective " + kQuickstart + " --op sendrecv -b 1M -e 64M -f 8 --json ";
  const Result a = RunCli(args + (d / "a.json").string());
  const Result b = RunCli(args + (d / "b.json").string());
  ASSERT_EQ(a.status, 0) << a.output;
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_EQ(a.output, b.output);
  const std::string json = Slurp(d / "a.json");
  EXPECT_EQ(json, Slurp(d / "b.json"));
  EXPECT_NE(a.output.find("# sendrecv on 16 GPUs of quickstart"), std::string::npos) << a.output;
  EXPECT_NE(json.find("\"collective\": \"sendrecv\""), std::string::npos) << json;
  // 1 MiB, 8 MiB, 64 MiB: three rows in the table and in the JSON, in the same order.
  size_t rows = 0;
  size_t at = 0;
  for (const char* size : {"1048576", "8388608", "67108864"}) {
    EXPECT_NE(a.output.find(" " + std::string(size) + " "), std::string::npos) << size;
    const size_t next = json.find("\"bytes\": " + std::string(size) + ".0", at);
    ASSERT_NE(next, std::string::npos) << size << " missing or out of order in " << json;
    at = next;
  }
  for (size_t p = a.output.find("  p2p\n"); p != std::string::npos;
       p = a.output.find("  p2p\n", p + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 3u) << a.output;
  size_t json_rows = 0;
  for (size_t p = json.find("\"algorithm\": \"p2p\""); p != std::string::npos;
       p = json.find("\"algorithm\": \"p2p\"", p + 1)) {
    ++json_rows;
  }
  EXPECT_EQ(json_rows, 3u) << json;
  fs::remove_all(d);
}

TEST(Cli, CollectiveSendRecvRejectsCollectiveOnlyOptions) {
  const std::string base = "collective " + kQuickstart + " --op sendrecv -b 1M -e 1M ";
  const std::pair<const char*, const char*> cases[] = {
      {"-a ring", "algorithm"},  {"--algorithm auto", "algorithm"},
      {"-p simple", "protocol"}, {"--channels 2", "channels"},
      {"--root 0", "root"},      {"-r 3", "root"}};
  for (const auto& [option, name] : cases) {
    const Result r = RunCli(base + option);
    EXPECT_EQ(r.status, 2) << option;
    EXPECT_NE(r.output.find("stratasim collective: --" + std::string(name) +
                            " does not apply to --op sendrecv (point-to-point transfers, not a "
                            "collective)"),
              std::string::npos)
        << option << ": " << r.output;
  }
  const Result one = RunCli(base + "-g 1");
  EXPECT_EQ(one.status, 2);
  EXPECT_NE(one.output.find("stratasim collective: " + kQuickstart +
                            ": sendrecv needs at least 2 GPUs (a rank "
                            "sending to itself is a local copy)"),
            std::string::npos)
      << one.output;
}

TEST(Cli, CalibrationFileChangesTheSimulatedTime) {
  const fs::path d = TempDir("calib");
  std::ofstream(d / "slow.yaml") << "format: stratasim-calibration\nversion: 1\ngpus:\n"
                                    "  - gpu: A100-SXM4-80GB\n    compute:\n"
                                    "      gemm: [{efficiency: 0.1}]\n";
  const Result base =
      RunCli("run " + kQuickstart + " -s ddp-no-overlap --out " + (d / "a").string());
  const Result slow = RunCli("run " + kQuickstart + " -s ddp-no-overlap --out " +
                             (d / "b").string() + " --calibration " + (d / "slow.yaml").string());
  ASSERT_EQ(base.status, 0) << base.output;
  ASSERT_EQ(slow.status, 0) << slow.output;
  auto iteration = [](const std::string& csv) {
    const size_t row = csv.find("\nddp-no-overlap,");
    size_t at = row;
    for (int i = 0; i < 4; ++i) at = csv.find(',', at + 1);  // name,kind,ok,num_gpus,
    return std::stod(csv.substr(at + 1));
  };
  EXPECT_GT(iteration(Slurp(d / "b" / "results.csv")),
            2 * iteration(Slurp(d / "a" / "results.csv")));
  const Result missing = RunCli("run " + kQuickstart + " --calibration /nonexistent.yaml");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.output.find("/nonexistent.yaml"), std::string::npos) << missing.output;
  fs::remove_all(d);
}

TEST(Cli, ParallelJobsGiveByteIdenticalOutputs) {
  const std::string gpt3d = std::string(STRATASIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  const fs::path a = TempDir("jobs-1"), b = TempDir("jobs-3");
  ASSERT_EQ(RunCli("run " + gpt3d + " -j 1 --out " + a.string()).status, 0);
  const Result parallel = RunCli("run " + gpt3d + " --jobs 3 --out " + b.string());
  ASSERT_EQ(parallel.status, 0) << parallel.output;
  EXPECT_EQ(Slurp(a / "results.json"), Slurp(b / "results.json"));
  EXPECT_EQ(Slurp(a / "results.csv"), Slurp(b / "results.csv"));
  EXPECT_EQ(Slurp(a / "ddp-overlap-25MiB.trace.json"), Slurp(b / "ddp-overlap-25MiB.trace.json"));
  EXPECT_EQ(Slurp(a / "ddp-no-overlap.trace.json"), Slurp(b / "ddp-no-overlap.trace.json"));
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST(Cli, JobsOutOfRangeIsAUsageError) {
  const Result zero = RunCli("run " + kQuickstart + " -j 0");
  EXPECT_EQ(zero.status, 2);
  EXPECT_NE(zero.output.find("stratasim run: --jobs 0: must be in [1, 256]"), std::string::npos)
      << zero.output;
}

#ifdef STRATASIM_EXPECT_CUDA_SIBLING
// `stratasim` is built without the CUDA backend and hands validate and calibrate to
// `stratasim-cuda` (cli/CMakeLists.txt): the cuda backend must still be reachable through it.
TEST(Cli, ValidateAndCalibrateReachTheCudaBackend) {
  // On a machine without a GPU the CUDA backend itself answers "no CUDA device"; a program
  // without it would answer "not available: this stratasim was built without nvcc...".
  for (const std::string& cmd :
       {"validate " + kQuickstart + " --backend cuda", std::string("calibrate --backend cuda")}) {
    const Result r = RunCli(cmd);
    EXPECT_EQ(r.output.find("built without nvcc"), std::string::npos) << cmd << "\n" << r.output;
  }
}
#endif

TEST(Cli, UsageErrors) {
  EXPECT_EQ(RunCli("").status, 2);
  const Result unknown = RunCli("frobnicate");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.output.find("unknown command 'frobnicate'"), std::string::npos);
  const Result missing = RunCli("run /nonexistent/s.yaml");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.output.find("/nonexistent/s.yaml"), std::string::npos) << missing.output;
  const Result version = RunCli("version");
  EXPECT_EQ(version.status, 0);
  EXPECT_NE(version.output.find("stratasim 0."), std::string::npos);
}

TEST(Cli, StrategiesListsKindsAndOptions) {
  const Result kinds = RunCli("strategies");
  ASSERT_EQ(kinds.status, 0) << kinds.output;
  EXPECT_NE(kinds.output.find("\n  pro-prophet  "), std::string::npos) << kinds.output;
  const Result ddp = RunCli("strategies ddp");
  ASSERT_EQ(ddp.status, 0) << ddp.output;
  EXPECT_NE(ddp.output.find("  overlap: bool, true, false; default: true\n"), std::string::npos)
      << ddp.output;
  const Result unknown = RunCli("strategies dpp");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.output.find("stratasim strategies: unknown strategy kind 'dpp' (known: ddp, "),
            std::string::npos)
      << unknown.output;
}

}  // namespace
