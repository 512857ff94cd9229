// `stratasim sweep` end to end (issue 24): its outputs do not depend on -j, on being killed and
// resumed, or on being run in shards; a grid's error is located in the grid; a journal of
// another sweep is refused. The MPI run is tests/sweep_mpi_test.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli_runner.h"

namespace {

namespace fs = std::filesystem;

using stratasim::testing::RunCli;
using stratasim::testing::RunCommand;
using stratasim::testing::Slurp;
using Result = stratasim::testing::CliResult;

const std::string kDir = std::string(STRATASIM_SOURCE_DIR) + "/tests/sweep/";
const std::string kScenario = kDir + "tiny.yaml";
const std::string kGrid = kDir + "tiny.grid.yaml";

fs::path TempDir(const std::string& name) {
  return stratasim::testing::TempDir("sweep-test", name);
}

Result Sweep(const fs::path& out, const std::string& more = "") {
  return RunCli("sweep " + kScenario + " --grid " + kGrid + " --out " + out.string() + " " + more);
}

int Lines(const fs::path& p) {
  const std::string s = Slurp(p);
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

// One uninterrupted -j 1 sweep, shared by the tests that compare against it, removed at exit.
const fs::path& Reference() {
  static const fs::path out = [] {
    const fs::path d = TempDir("reference");
    const Result r = Sweep(d, "-j 1");
    EXPECT_EQ(r.status, 0) << r.output;
    return d;
  }();
  return out;
}

class RemoveReference : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(stratasim::testing::TempDir("sweep-test", "reference"), ec);
  }
};
const ::testing::Environment* const kRemoveReference =
    ::testing::AddGlobalTestEnvironment(new RemoveReference);

TEST(SweepCli, WritesOnePointPerGridCombinationWithItsFigures) {
  const fs::path& out = Reference();
  EXPECT_EQ(Lines(out / "sweep.jsonl"), 1 + 4);
  const nlohmann::json j = nlohmann::json::parse(Slurp(out / "sweep.json"));
  ASSERT_EQ(j["points"].size(), 4u);
  // The first key outermost: point 1 is 2 servers at 200Gb/s.
  EXPECT_EQ(j["points"][1]["values"]["cluster.servers[0].count"], "2");
  EXPECT_EQ(j["points"][1]["values"]["cluster.servers[0].nics.bandwidth"], "200Gb/s");
  for (const auto& p : j["points"]) {
    const auto& s = p["strategies"][0];
    EXPECT_EQ(s["name"], "ddp");
    EXPECT_TRUE(s["ok"].get<bool>()) << s;
    EXPECT_GT(s["iteration_s"].get<double>(), 0);
    EXPECT_GT(s["mfu"].get<double>(), 0);
    EXPECT_GT(s["peak_memory_bytes"].get<double>(), 0);
  }
  // Each point is its own simulation: 8x the NIC bandwidth shortens the exposed gradient
  // all-reduce across servers, at 2 and at 4 servers.
  for (int servers : {0, 2}) {
    const double slow = j["points"][servers]["strategies"][0]["iteration_s"].get<double>();
    const double fast = j["points"][servers + 1]["strategies"][0]["iteration_s"].get<double>();
    EXPECT_LT(fast, slow) << "point " << servers;
  }
  const std::string csv = Slurp(out / "sweep.csv");
  EXPECT_EQ(csv.rfind("point,cluster.servers[0].count,cluster.servers[0].nics.bandwidth,strategy,"
                      "kind,ok,error,iteration_s,samples_per_s,mfu,peak_memory_bytes,"
                      "exposed_comm_fraction",
                      0),
            0u)
      << csv;
  EXPECT_EQ(Lines(out / "sweep.csv"), 1 + 4);
}

TEST(SweepCli, OutputsDoNotDependOnJobs) {
  const fs::path out = TempDir("j2");
  const Result r = Sweep(out, "-j 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("sweep: 4/4 points"), std::string::npos) << r.output;
  EXPECT_EQ(Slurp(out / "sweep.json"), Slurp(Reference() / "sweep.json"));
  EXPECT_EQ(Slurp(out / "sweep.csv"), Slurp(Reference() / "sweep.csv"));
  fs::remove_all(out);
}

TEST(SweepCli, KilledSweepResumesToByteIdenticalOutputs) {
  const fs::path out = TempDir("killed");
  // The sweep kills itself (SIGKILL) once 2 points are in its journal: no clean-up runs.
  const Result k =
      RunCommand("STRATASIM_SWEEP_TEST_KILL_AFTER=2 " + std::string(STRATASIM_BINARY) + " sweep " +
                 kScenario + " --grid " + kGrid + " --out " + out.string());
  EXPECT_EQ(k.status, 128 + 9) << k.output;
  ASSERT_EQ(Lines(out / "sweep.jsonl"), 1 + 2);
  EXPECT_FALSE(fs::exists(out / "sweep.csv"));
  // A kill during a write leaves a partial last line: the resumed sweep cuts it off.
  {
    std::ofstream j(out / "sweep.jsonl", std::ios::app | std::ios::binary);
    j << "{\"point\":3,\"values\":{\"cluster.ser";
  }
  const Result resumed = Sweep(out, "-j 2");
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("4 points (2 keys), 2 done"), std::string::npos) << resumed.output;
  EXPECT_EQ(Lines(out / "sweep.jsonl"), 1 + 4);
  EXPECT_EQ(Slurp(out / "sweep.json"), Slurp(Reference() / "sweep.json"));
  EXPECT_EQ(Slurp(out / "sweep.csv"), Slurp(Reference() / "sweep.csv"));
  // Done is done: a third run simulates nothing and writes the same files.
  const Result again = Sweep(out);
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_NE(again.output.find("4 done"), std::string::npos) << again.output;
  EXPECT_EQ(Slurp(out / "sweep.csv"), Slurp(Reference() / "sweep.csv"));
  fs::remove_all(out);
}

TEST(SweepCli, ShardsThenAPlainSweepGiveTheLocalOutputs) {
  const fs::path out = TempDir("shards");
  const Result a = Sweep(out, "--shard 0/2");
  ASSERT_EQ(a.status, 0) << a.output;
  const Result b = Sweep(out, "--shard 1/2");
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_EQ(Lines(out / "sweep.shard-0-of-2.jsonl"), 1 + 2);
  EXPECT_EQ(Lines(out / "sweep.shard-1-of-2.jsonl"), 1 + 2);
  EXPECT_FALSE(fs::exists(out / "sweep.csv"));
  const Result merge = Sweep(out);
  ASSERT_EQ(merge.status, 0) << merge.output;
  EXPECT_NE(merge.output.find("4 done"), std::string::npos) << merge.output;
  EXPECT_EQ(Slurp(out / "sweep.json"), Slurp(Reference() / "sweep.json"));
  EXPECT_EQ(Slurp(out / "sweep.csv"), Slurp(Reference() / "sweep.csv"));
  fs::remove_all(out);
}

TEST(SweepCli, JournalOfAnotherSweepIsRefused) {
  const fs::path out = TempDir("other");
  fs::copy_file(Reference() / "sweep.jsonl", out / "sweep.jsonl");
  const fs::path grid = out / "other.grid.yaml";
  std::ofstream(grid) << "cluster.servers[0].count: [2, 3]\n";
  const Result r =
      RunCli("sweep " + kScenario + " --grid " + grid.string() + " --out " + out.string());
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(
      r.output.find((out / "sweep.jsonl").string() + ":1: this journal belongs to another sweep"),
      std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("the scenario or the grid changed"), std::string::npos) << r.output;
  fs::remove_all(out);
}

TEST(SweepCli, BadGridExitsTwoLocatedInTheGrid) {
  const fs::path out = TempDir("bad-grid");
  const fs::path grid = out / "bad.grid.yaml";
  std::ofstream(grid) << "cluster.servers[0].count: [2, 4]\ntraining.global_batch: [16, lots]\n";
  const Result r =
      RunCli("sweep " + kScenario + " --grid " + grid.string() + " --out " + (out / "o").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("stratasim: error: " + grid.string() +
                          ":2:29: training.global_batch = \"lots\": "),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(out / "o" / "sweep.jsonl"));
  fs::remove_all(out);
}

TEST(SweepCli, BadShardIsAUsageError) {
  const Result r = RunCli("sweep " + kScenario + " --grid " + kGrid + " --shard 2/2");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--shard 2/2: must be I/N with 0 <= I < N"), std::string::npos)
      << r.output;
}

TEST(SweepCli, PointTheScenarioRefusesIsRecordedAndTheOthersRun) {
  // 3 GPUs a server with the scenario's 2 NICs: the loader's rule, at that point only.
  const fs::path out = TempDir("combination");
  const fs::path grid = out / "g.yaml";
  std::ofstream(grid) << "cluster.servers[0].gpus_per_server: [2, 3]\n";
  const Result r =
      RunCli("sweep " + kScenario + " --grid " + grid.string() + " --out " + (out / "o").string());
  EXPECT_EQ(r.status, 1) << r.output;
  const nlohmann::json j = nlohmann::json::parse(Slurp(out / "o" / "sweep.json"));
  ASSERT_EQ(j["points"].size(), 2u);
  EXPECT_TRUE(j["points"][0]["strategies"][0]["ok"].get<bool>());
  const std::string e = j["points"][1]["error"].get<std::string>();
  EXPECT_EQ(e.rfind(kScenario + ":12:"), 0u) << e;
  EXPECT_NE(e.find("cluster.servers[0].nics.count"), std::string::npos) << e;
  fs::remove_all(out);
}

}  // namespace
