// Validate mode on the host backend, end to end through the stratasim program: a small DDP
// plan run for real on CPU threads and compared with its simulation, the calibration
// round-trip, and the errors the real world throws.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/calibration.h"
#include "tests/cli_runner.h"

namespace {

namespace fs = std::filesystem;

using stratasim::testing::RunCli;
using stratasim::testing::Slurp;
using Result = stratasim::testing::CliResult;

fs::path TempDir(const std::string& name) {
  return stratasim::testing::TempDir("validate-test", name);
}

// A GPT small enough to train for real on two CPU threads in a fraction of a second. The
// cluster is a stand-in: validate replaces it by the machine it measures.
std::string TinyScenario(const std::string& precision) {
  return "name: tiny-" + precision +
         "\n"
         "cluster:\n"
         "  gpus:\n"
         "    - {name: host-cpu, peak: {fp32: \"30GFLOPS\", bf16: \"30GFLOPS\"}, memory: "
         "\"4GiB\",\n"
         "       memory_bandwidth: \"10GB/s\"}\n"
         "  servers:\n"
         "    - {name: host, gpu: host-cpu, gpus_per_server: 2,\n"
         "       nvswitch: {bandwidth: \"5GB/s\", latency: \"20us\"}}\n"
         // Unfused attention: the figures below (activations) are of its kernels.
         "model: {kind: gpt, layers: 1, hidden: 64, heads: 2, sequence: 32, vocabulary: 256,\n"
         "        attention: unfused}\n"
         "training:\n"
         "  global_batch: 2\n"
         "  micro_batch: 1\n"
         "  precision: " +
         precision +
         "\n"
         "  iterations: {warmup: 1, measured: 3}\n"
         "strategies:\n"
         "  - {name: ddp, kind: ddp, options: {overlap: false}}\n";
}

fs::path WriteScenario(const fs::path& dir, const std::string& precision) {
  const fs::path p = dir / ("tiny-" + precision + ".yaml");
  std::ofstream(p) << TinyScenario(precision);
  return p;
}

nlohmann::json Strategy(const fs::path& out) {
  const auto j = nlohmann::json::parse(Slurp(out / "validation.json"));
  return j.at("strategies").at(0);
}

TEST(ValidateHost, SmallDdpPlanRunsForRealAndShowsBothTimes) {
  const fs::path dir = TempDir("ddp");
  const fs::path out = dir / "out";
  const Result r = RunCli("validate " + WriteScenario(dir, "fp32").string() +
                          " --backend host --ranks 2 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("measured (ms)  simulated (ms)  error %"), std::string::npos) << r.output;
  for (const char* row : {"ddp       iteration", "  gemm ", "  attention ", "  elementwise ",
                          "  optimizer ", "  all_reduce "}) {
    EXPECT_NE(r.output.find(row), std::string::npos) << row << "\n" << r.output;
  }
  const nlohmann::json s = Strategy(out);
  EXPECT_TRUE(s["measured"].get<bool>());
  EXPECT_TRUE(s["simulated"].get<bool>());
  EXPECT_GT(s["iteration"]["measured_s"].get<double>(), 0);
  EXPECT_GT(s["iteration"]["simulated_s"].get<double>(), 0);
  EXPECT_EQ(s["tasks_measured"], s["tasks_total"]);
  for (const auto& k : s["kinds"]) {
    EXPECT_GT(k["measured_s"].get<double>(), 0) << k.dump();
    EXPECT_GT(k["simulated_s"].get<double>(), 0) << k.dump();
  }
  EXPECT_EQ(Slurp(out / "validation.txt"),
            r.output.substr(r.output.find("scenario: "), Slurp(out / "validation.txt").size()));
  for (const char* f : {"ddp.measured.trace.json", "ddp.simulated.trace.json", "ddp.measured.json",
                        "host-cluster.yaml"}) {
    EXPECT_TRUE(fs::exists(out / f)) << f;
  }
  const auto measured = nlohmann::json::parse(Slurp(out / "ddp.measured.json"));
  EXPECT_EQ(measured["executor"], "host");
  for (const auto& e : fs::directory_iterator(out)) {
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << "temp file left behind";
  }
  fs::remove_all(dir);
}

// A parameter server whose shards live on host CPU sockets (Task::on_host) is refused by name,
// not run on the rank's thread and compared with a simulation that ran it on the CPU.
TEST(ValidateHost, CpuHostedTasksAreRefusedWithTheReason) {
  const fs::path dir = TempDir("cpu-ps");
  const fs::path out = dir / "out";
  const fs::path scenario = dir / "cpu-ps.yaml";
  std::string text = TinyScenario("fp32");
  text = text.substr(0, text.find("strategies:\n")) +
         "strategies:\n"
         "  - {name: ps-cpu, kind: parameter-server, options: {servers: 1, server_device: cpu}}\n";
  std::ofstream(scenario) << text;
  const Result r =
      RunCli("validate " + scenario.string() + " --backend host --ranks 2 --out " + out.string());
  EXPECT_EQ(r.status, 1) << r.output;
  const size_t at = r.output.find("FAILED: cannot be validated: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" of its tasks run on a host CPU socket (e.g. parameter-server shards "
                          "with server_device: cpu), which the validate backends do not place; "
                          "use server_device: gpu",
                          at),
            std::string::npos)
      << r.output;
  fs::remove_all(dir);
}

// A plan that asks for a tree all-reduce is run by the host as a ring: the simulation it is
// compared with runs the ring too (issue 18: validate compares like with like).
TEST(ValidateHost, TheSimulationRunsTheAlgorithmTheBackendRan) {
  const fs::path dir = TempDir("tree");
  std::string text = TinyScenario("fp32");
  text.replace(text.find("options: {overlap: false}"), 25,
               "options: {overlap: false, algorithm: tree}");
  const fs::path scenario = dir / "tree.yaml";
  std::ofstream(scenario) << text;
  const fs::path out = dir / "out";
  const Result r =
      RunCli("validate " + scenario.string() + " --backend host --ranks 2 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto trace = nlohmann::json::parse(Slurp(out / "ddp.simulated.trace.json"));
  int collectives = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") != "collective") continue;
    ++collectives;
    EXPECT_EQ(e["args"]["algorithm"], "ring") << e.dump();
  }
  EXPECT_GT(collectives, 0);
  fs::remove_all(dir);
}

// The default cost model is clearly off for a CPU in BF16: the host-cpu kind lists its FP32
// peak for BF16 (no BF16 units; Eigen converts element by element), so the defaults predict
// BF16 GEMMs tens of times too fast. Calibrating in BF16 measures that. Both simulations are
// compared with the same real run, so the machine's noise cannot favour either.
TEST(ValidateHost, CalibrationRoundTripReducesTheIterationError) {
  const fs::path dir = TempDir("roundtrip");
  const fs::path cal = dir / "host-bf16.yaml";
  const Result c = RunCli(
      "calibrate --backend host --ranks 2 --dtype bf16 --quick "
      "--max-bytes 64KiB --out " +
      cal.string());
  ASSERT_EQ(c.status, 0) << c.output;
  EXPECT_NE(c.output.find("wrote " + cal.string()), std::string::npos) << c.output;
  const stratasim::Calibration loaded = stratasim::LoadCalibrationFile(cal.string());
  ASSERT_NE(loaded.FindGpu("host-cpu"), nullptr);
  EXPECT_NE(loaded.FindCollective(stratasim::CollectiveKind::kAllReduce, 2, "host-cpu"), nullptr);

  const fs::path scenario = WriteScenario(dir, "bf16");
  const fs::path out = dir / "out";
  const Result v = RunCli("validate " + scenario.string() + " --ranks 2 --out " + out.string() +
                          " --calibration " + cal.string());
  ASSERT_EQ(v.status, 0) << v.output;
  EXPECT_NE(v.output.find("default sim (ms)  error %  calibrated sim (ms)  error %"),
            std::string::npos)
      << v.output;
  const nlohmann::json it = Strategy(out)["iteration"];
  const double before = it["default_error_percent"].get<double>();
  const double after = it["error_percent"].get<double>();
  EXPECT_LT(before, -50) << "the defaults should be clearly off here\n" << v.output;
  EXPECT_LT(std::fabs(after), std::fabs(before)) << v.output;
  EXPECT_TRUE(fs::exists(out / "ddp.simulated-defaults.trace.json"));

  // `stratasim run` takes the same file.
  const Result run = RunCli("run " + scenario.string() + " --out " + (dir / "run").string() +
                            " --calibration " + cal.string());
  EXPECT_EQ(run.status, 0) << run.output;
  fs::remove_all(dir);
}

// A fabric calibration (`calibrate --fabric`'s `fabric:` entries) reaches the simulation the run
// is compared with: at 1 ms per hop, each 2-member ring all-reduce takes its 2 steps x 1 ms,
// where the defaults (the host's measured memcpy link) take microseconds.
TEST(ValidateHost, AFabricCalibrationSetsTheSimulatedLinks) {
  const fs::path dir = TempDir("fabric");
  const fs::path cal = dir / "fabric.yaml";
  std::ofstream(cal) << "format: stratasim-calibration\nversion: 1\nfabric:\n"
                        "  - {class: intra, protocol: simple, latency: \"1ms\", "
                        "bandwidth: \"1GB/s\"}\n";
  const fs::path out = dir / "out";
  const Result v = RunCli("validate " + WriteScenario(dir, "fp32").string() + " --ranks 2 --out " +
                          out.string() + " --calibration " + cal.string());
  ASSERT_EQ(v.status, 0) << v.output;
  const nlohmann::json strategy = Strategy(out);
  bool seen = false;
  for (const nlohmann::json& k : strategy["kinds"]) {
    if (k["kind"] != "all_reduce") continue;
    seen = true;
    EXPECT_LT(k["default_simulated_s"].get<double>(), 1e-3) << v.output;
    EXPECT_GE(k["simulated_s"].get<double>(), 2e-3) << v.output;
  }
  EXPECT_TRUE(seen) << v.output;
  fs::remove_all(dir);
}

TEST(ValidateHost, FewerRanksThanThePlanNeedsEndsBeforeRunning) {
  const fs::path out = TempDir("ranks");
  const std::string quickstart = std::string(STRATASIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  const Result r =
      RunCli("validate " + quickstart + " --backend host --ranks 2 --out " + out.string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("stratasim validate: " + quickstart +
                          ": the scenario's cluster has 16 GPUs but backend host offers 2 ranks "
                          "(threads; --ranks N sets more): nothing was run"),
            std::string::npos)
      << r.output;
  fs::remove_all(out);
}

TEST(ValidateHost, OutOfMemoryEndsTheRunAndKeepsWhatWasMeasured) {
  const fs::path dir = TempDir("oom");
  const fs::path out = dir / "out";
  // Model states and gradient buckets take 1.31 MiB per rank: the first layer's forward pass
  // runs, then its activations (150 KiB) no longer fit.
  const Result r = RunCli("validate " + WriteScenario(dir, "fp32").string() +
                          " --ranks 2 --memory-per-rank 1.4MiB --out " + out.string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("ddp       FAILED: out of memory: host backend: out of memory on rank"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(activations), bringing the rank to 1.46 MiB of its 1.40 MiB"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("tasks measured, kept in " + out.string() + "/ddp.measured.json"),
            std::string::npos)
      << r.output;
  const nlohmann::json s = Strategy(out);
  EXPECT_FALSE(s["measured"].get<bool>());
  EXPECT_GT(s["tasks_measured"].get<int>(), 0) << "the tasks run before the failure are lost";
  EXPECT_LT(s["tasks_measured"].get<int>(), s["tasks_total"].get<int>());
  const auto trace = nlohmann::json::parse(Slurp(out / "ddp.measured.json"));
  int finished = 0, timed = 0;
  const auto& starts = trace["records"]["start_s"];
  const auto& ends = trace["records"]["end_s"];
  for (std::size_t i = 0; i < ends.size(); ++i) {
    finished += ends[i].get<double>() >= 0 ? 1 : 0;
    timed += ends[i].get<double>() > starts[i].get<double>() ? 1 : 0;
  }
  EXPECT_EQ(finished, s["tasks_measured"].get<int>());
  EXPECT_GT(timed, 0) << "no compute task of the first layer was kept";
  fs::remove_all(dir);
}

TEST(ValidateHost, CudaBackendWithoutADeviceEndsWithTheReason) {
  const fs::path dir = TempDir("cuda");
  const Result r = RunCli("validate " + WriteScenario(dir, "fp32").string() +
                          " --backend cuda --out " + (dir / "out").string());
  if (r.status == 0) {
    fs::remove_all(dir);
    GTEST_SKIP() << "a CUDA device is present: the cuda backend ran";
  }
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_EQ(r.output.rfind("stratasim validate: ", 0), 0u) << r.output;
  // Either this build has no CUDA backend, or it has one and no device.
  EXPECT_TRUE(r.output.find("backend 'cuda' is not available") != std::string::npos ||
              r.output.find("cuda backend: no CUDA device") != std::string::npos)
      << r.output;
  fs::remove_all(dir);
}

TEST(ValidateHost, BadCommandLinesAreRefusedWithTheRule) {
  const std::string quickstart = std::string(STRATASIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  Result r = RunCli("validate " + quickstart + " --backend tpu");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output, "stratasim validate: --backend tpu: must be host or cuda\n");
  r = RunCli("validate");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output, "stratasim validate: the scenario file is required\n");
  r = RunCli("validate " + quickstart + " --iterations 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output, "stratasim validate: --iterations must be >= 1\n");
  const std::string shared = std::string(STRATASIM_SOURCE_DIR) + "/scenarios/shared-cluster.yaml";
  r = RunCli("validate " + shared + " --backend host --ranks 32");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output, "stratasim validate: " + shared +
                          " lists jobs, not strategies: validate runs strategies (a "
                          "shared-cluster scenario is simulated only, docs/multi-job.md)\n");
  r = RunCli("compress-check " + shared);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output, "stratasim compress-check: " + shared +
                          " lists jobs, not strategies: compress-check takes its model and "
                          "strategies from a scenario of strategies\n");
  r = RunCli("validate " + quickstart + " --memory-per-rank 12parsecs");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("stratasim validate: --memory-per-rank: not"), std::string::npos)
      << r.output;
  r = RunCli("calibrate --dtype fp99");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output, "stratasim calibrate: --dtype fp99: not a type\n");
  r = RunCli("calibrate --dtype int8 --ranks 2");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("stratasim calibrate: --dtype int8: calibrate: host-cpu has no peak "
                          "for int8\n"),
            std::string::npos)
      << r.output;
  r = RunCli("calibrate --min-bytes 1MiB --max-bytes 1KiB");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output, "stratasim calibrate: --min-bytes must be >= 4 and <= --max-bytes\n");
}

}  // namespace
