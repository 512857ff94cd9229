// The pipeline report (docs/report-formats.md, "pipeline") on the bundled scenarios/gpt-3d.yaml:
// every pipelined strategy has its partition, stage times, start-up, bubble and memory per
// stage, and they are sane; the others have none and their output is as before.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "report/pipeline_table.h"
#include "report/results_json.h"

namespace stratasim {
namespace {

int Sum(const std::string& partition) {
  int sum = 0, n = 0;
  for (char c : partition) {
    if (c >= '0' && c <= '9') {
      n = n * 10 + (c - '0');
    } else {
      sum += n;
      n = 0;
    }
  }
  return sum + n;
}

TEST(PipelineReport, GptThreeDHasSaneFigures) {
  const Scenario s = LoadScenarioFile(std::string(STRATASIM_SOURCE_DIR) + "/scenarios/gpt-3d.yaml");
  RunOptions options;
  options.jobs = 2;
  const std::vector<StrategyRun> runs =
      RunStrategies(s, {"ddp", "pp4-1f1b", "pp4-interleaved", "3d-t2p4d4"}, options);
  RunResults results;
  for (const StrategyRun& run : runs) {
    const StrategyResult& r = run.result;
    SCOPED_TRACE(r.name);
    ASSERT_TRUE(r.ok) << r.error;
    results.strategies.push_back(r);
    const Metrics& m = r.metrics;
    if (r.name == "ddp") {
      EXPECT_FALSE(r.pipeline);
      EXPECT_TRUE(m.stage_compute_s.empty());
      EXPECT_TRUE(m.stage_bubble_fraction.empty());
      EXPECT_EQ(m.startup_s, 0);
      continue;
    }
    ASSERT_TRUE(r.pipeline);
    EXPECT_EQ(r.pipeline->planner, "manual");
    EXPECT_EQ(r.pipeline->planning_s, 0);
    EXPECT_EQ(r.pipeline->stages, 4);
    EXPECT_EQ(r.pipeline->partition_unit, "layers");
    EXPECT_EQ(Sum(r.pipeline->partition), s.model.layers) << r.pipeline->partition;
    EXPECT_EQ(r.pipeline->partition.find('+') != std::string::npos, r.name == "pp4-interleaved")
        << r.pipeline->partition;
    ASSERT_EQ(m.stage_compute_s.size(), 4u);
    ASSERT_EQ(m.stage_bubble_fraction.size(), 4u);
    EXPECT_EQ(r.peak_memory_per_stage_bytes.size(), 4u);
    const StageSummary st = SummarizeStages(m);
    EXPECT_GE(st.max_stage_compute_s, st.mean_stage_compute_s);
    EXPECT_GT(st.mean_stage_compute_s, 0);
    EXPECT_LE(st.max_stage_compute_s, m.iteration_time_s);
    EXPECT_GT(st.bubble_fraction, 0);
    EXPECT_LT(st.bubble_fraction, 1);
    // The busiest rank's compute and the stage's mean idle share fill at least the iteration.
    for (size_t k = 0; k < 4; ++k) {
      EXPECT_GE(m.stage_compute_s[k] / m.iteration_time_s + m.stage_bubble_fraction[k], 1 - 1e-9)
          << "stage " << k;
    }
    EXPECT_GT(m.startup_s, 0);
    EXPECT_LT(m.startup_s, m.iteration_time_s);
  }
  const std::string table = FormatPipelineTable(results);
  EXPECT_EQ(table.find("\nddp "), std::string::npos) << table;
  for (const char* name : {"pp4-1f1b", "pp4-interleaved", "3d-t2p4d4"}) {
    EXPECT_NE(table.find(std::string("\n") + name + " "), std::string::npos) << table;
  }
  const nlohmann::json j = nlohmann::json::parse(ResultsToJson(results));
  EXPECT_FALSE(j["strategies"][0].contains("pipeline"));
  for (size_t i = 1; i < 4; ++i) EXPECT_TRUE(j["strategies"][i].contains("pipeline")) << i;
}

}  // namespace
}  // namespace stratasim
