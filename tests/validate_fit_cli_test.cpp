// `stratasim validate --fit` end to end on the host backend (docs/validate.md, "Shrink to
// fit"): a scenario of 8 GPUs validated on 2 ranks as a shrunk copy, with what was shrunk and
// the full plan's simulated time in validation.txt and validation.json; the refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_runner.h"

namespace {

namespace fs = std::filesystem;

using stratasim::testing::RunCli;
using stratasim::testing::Slurp;
using Result = stratasim::testing::CliResult;

// One server of 8 stand-in GPUs (validate replaces them by the machine) and a GPT small
// enough to train for real on two CPU threads.
constexpr char kScenario[] =
    "name: fit8\n"
    "cluster:\n"
    "  gpus:\n"
    "    - {name: host-cpu, peak: {fp32: \"30GFLOPS\"}, memory: \"4GiB\",\n"
    "       memory_bandwidth: \"10GB/s\"}\n"
    "  servers:\n"
    "    - {name: host, gpu: host-cpu, gpus_per_server: 8,\n"
    "       nvswitch: {bandwidth: \"5GB/s\", latency: \"20us\"}}\n"
    "model: {kind: gpt, layers: 2, hidden: 64, heads: 2, sequence: 32, vocabulary: 256}\n"
    "training:\n"
    "  global_batch: 8\n"
    "  micro_batch: 1\n"
    "  precision: fp32\n"
    "  iterations: {warmup: 1, measured: 2}\n"
    "strategies:\n"
    "  - {name: ddp, kind: ddp}\n"
    "  - {name: pp, kind: 3d, options: {tensor: 2, stages: 2, data: 2}}\n";

struct FitRun {
  Result result;
  fs::path out;
};

class ValidateFit : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = stratasim::testing::TempDir(
        "validate-fit-test", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    scenario_ = dir_ / "fit8.yaml";
    std::ofstream(scenario_) << kScenario;
  }
  void TearDown() override { fs::remove_all(dir_); }

  FitRun Validate(const std::string& options) {
    const fs::path out = dir_ / "out";
    fs::remove_all(out);
    return {RunCli("validate " + scenario_.string() + " --backend host --ranks 2 --out " +
                   out.string() + " " + options),
            out};
  }

  nlohmann::json Strategy(const fs::path& out, int i) {
    return nlohmann::json::parse(Slurp(out / "validation.json")).at("strategies").at(i);
  }

  fs::path dir_, scenario_;
};

TEST_F(ValidateFit, WithoutFitTheRunEndsAndSaysSo) {
  const FitRun r = Validate("");
  EXPECT_EQ(r.result.status, 1) << r.result.output;
  EXPECT_NE(r.result.output.find("the scenario's cluster has 8 GPUs but backend host offers 2 "
                                 "ranks (threads; --ranks N sets more): nothing was run (--fit "
                                 "validates a copy of each plan shrunk to the ranks)"),
            std::string::npos)
      << r.result.output;
}

TEST_F(ValidateFit, DdpRunsOnTwoRanksAndTheReportSaysWhatWasShrunk) {
  const FitRun r = Validate("--fit --strategy ddp");
  ASSERT_EQ(r.result.status, 0) << r.result.output;
  const std::string& out = r.result.output;
  EXPECT_NE(out.find("validate: ddp: running"), std::string::npos) << out;
  EXPECT_NE(out.find("on 2 host ranks"), std::string::npos) << out;
  EXPECT_NE(out.find("          full plan, 8 GPUs"), std::string::npos) << out;
  EXPECT_NE(out.find("shrunk to fit (--fit; measured and simulated above: the shrunk plan):\n"
                     "  ddp: ran on 2 of the plan's 8 GPUs:\n"
                     "    data-parallel replicas 8 -> 2\n"
                     "    GPUs 8 -> 2 (servers 1 -> 1)\n"
                     "    global batch 8 -> 2 (1 per replica, as in the full plan)\n"
                     "    kept: tensor 1 x stages 1, rank order tpd; ranks 0-1 are the full "
                     "plan's ranks 0-1\n"
                     "    full plan (8 GPUs, the scenario's cluster): simulated iteration "),
            std::string::npos)
      << out;
  const std::string txt = Slurp(r.out / "validation.txt");
  EXPECT_NE(txt.find("ddp: ran on 2 of the plan's 8 GPUs"), std::string::npos) << txt;
  const nlohmann::json s = Strategy(r.out, 0);
  EXPECT_TRUE(s["measured"].get<bool>());
  EXPECT_TRUE(s["simulated"].get<bool>());
  EXPECT_EQ(s["fit"]["gpus"], 2);
  EXPECT_EQ(s["fit"]["full_gpus"], 8);
  EXPECT_EQ(s["fit"]["changes"][0], "data-parallel replicas 8 -> 2");
  const double full = s["fit"]["full_plan"]["simulated_iteration_s"].get<double>();
  EXPECT_GT(full, 0);
  // The full plan is simulated on the scenario's own stand-in cluster (30 GFLOP/s GPUs on a
  // 5 GB/s switch), the shrunk one on the host's threads: different machines, different times.
  EXPECT_NE(full, s["iteration"]["simulated_s"].get<double>());
  const auto measured = nlohmann::json::parse(Slurp(r.out / "ddp.measured.json"));
  EXPECT_EQ(measured["num_ranks"], 2) << measured.dump().substr(0, 300);
}

TEST_F(ValidateFit, PipelineStagesAreDroppedOnlyWhenAsked) {
  FitRun r = Validate("--fit --strategy pp");
  EXPECT_EQ(r.result.status, 1) << r.result.output;
  EXPECT_NE(r.result.output.find(
                "pp        FAILED: cannot be shrunk: " + scenario_.string() +
                ":17:5: strategies[1].kind = \"3d\": strategy pp cannot be shrunk to 2 ranks "
                "(--fit): one data-parallel replica needs tensor 2 x stages 2 = 4 GPUs, more than "
                "the 2 ranks (--fit dp,pp may drop pipeline stages too)"),
            std::string::npos)
      << r.result.output;

  r = Validate("--fit=dp,pp --strategy pp");
  ASSERT_EQ(r.result.status, 0) << r.result.output;
  const nlohmann::json s = Strategy(r.out, 0);
  EXPECT_TRUE(s["measured"].get<bool>());
  EXPECT_EQ(s["fit"]["gpus"], 2);
  EXPECT_EQ(s["fit"]["changes"][0], "data-parallel replicas 2 -> 1");
  EXPECT_EQ(s["fit"]["changes"][1].get<std::string>().rfind("pipeline stages 2 -> 1: stage 1 "
                                                            "dropped with its 1 transformer "
                                                            "layer (model layers 2 -> 1",
                                                            0),
            0u)
      << s["fit"].dump();
  EXPECT_GT(s["fit"]["full_plan"]["simulated_iteration_s"].get<double>(), 0);
}

TEST_F(ValidateFit, ABadPolicyIsRefusedWithTheRule) {
  const FitRun r = Validate("--fit=pp");
  EXPECT_EQ(r.result.status, 2);
  EXPECT_EQ(r.result.output,
            "stratasim validate: --fit pp: must be dp (drop data-parallel replicas) or dp,pp "
            "(then pipeline stages too)\n");
}

}  // namespace
