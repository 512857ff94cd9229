// The report's one-line summary of the scenario (DescribeRun).
#include <gtest/gtest.h>

#include <string>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "tests/scenario_text.h"

namespace stratasim {
namespace {

std::string ModelSummary(const std::string& preset) {
  const Scenario s =
      LoadScenarioText("name: d\n" + testing::TwoA100Servers(4) + "model: {preset: " + preset +
                           "}\ntraining: {global_batch: 8, micro_batch: 1}\n"
                           "strategies:\n  - {name: s, kind: ddp}\n",
                       "d.yaml");
  return DescribeRun(s, "test").model_summary;
}

TEST(DescribeRun, ParametersInMillionsThenBillions) {
  EXPECT_EQ(ModelSummary("gpt2-medium"),
            "gpt gpt2-medium (354.8 M parameters), sequence 1024, bf16");
  EXPECT_EQ(ModelSummary("llama2-7b"), "llama llama2-7b (6738 M parameters), sequence 4096, bf16");
  // Not "7.055e+04 M".
  EXPECT_EQ(ModelSummary("llama3-70b"),
            "llama llama3-70b (70.55 B parameters), sequence 8192, bf16");
  EXPECT_EQ(ModelSummary("llama3-405b"),
            "llama llama3-405b (405.9 B parameters), sequence 8192, bf16");
}

}  // namespace
}  // namespace stratasim
