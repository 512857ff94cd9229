#include "report/pipeline_table.h"

#include <gtest/gtest.h>

namespace stratasim {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

StrategyResult Pipelined(const std::string& name, const std::string& planner) {
  StrategyResult r;
  r.name = name;
  r.kind = "3d";
  r.metrics.iteration_time_s = 0.5;
  r.metrics.stage_compute_s = {0.25, 0.375};
  r.metrics.stage_bubble_fraction = {0.5, 0.25};
  r.metrics.startup_s = 0.0625;
  r.peak_memory_per_stage_bytes = {20 * kGiB, 10.5 * kGiB};
  PipelineFigures f;
  f.partition = "3,5";
  f.stages = 2;
  f.planner = planner;
  if (planner != "manual") {
    f.planning_s = 0.0123;
    f.predicted_iteration_s = 0.45;
  }
  r.pipeline = f;
  return r;
}

TEST(PipelineTableTest, SummarizesTheStages) {
  Metrics m;
  m.stage_compute_s = {0.25, 0.375, 0.5};
  m.stage_bubble_fraction = {0.5, 0.25, 0.0};
  const StageSummary s = SummarizeStages(m);
  EXPECT_DOUBLE_EQ(s.max_stage_compute_s, 0.5);
  EXPECT_DOUBLE_EQ(s.mean_stage_compute_s, 0.375);
  EXPECT_DOUBLE_EQ(s.bubble_fraction, 0.25);
  const StageSummary none = SummarizeStages(Metrics{});
  EXPECT_EQ(none.max_stage_compute_s, 0);
  EXPECT_EQ(none.bubble_fraction, 0);
}

TEST(PipelineTableTest, OneRowPerPipelinedStrategy) {
  RunResults r;
  StrategyResult ddp;
  ddp.name = "ddp";
  r.strategies = {ddp, Pipelined("even", "manual"), Pipelined("auto", "autopipe")};
  StrategyResult failed = Pipelined("failed", "manual");
  failed.ok = false;
  r.strategies.push_back(failed);
  EXPECT_EQ(FormatPipelineTable(r),
            "Pipeline (per measured iteration; stage: compute time of its busiest GPU; start-up: "
            "first forward to the last stage's first forward; bubble: share of the iteration a "
            "stage's compute is idle, mean over stages)\n"
            "\n"
            "strategy  planner   partition (layers)  max stage (ms)  mean stage (ms)  "
            "start-up (ms)  bubble  peak mem/stage (GiB)  planning (ms)  predicted / simulated "
            "(ms)\n"
            "--------  --------  ------------------  --------------  ---------------  "
            "-------------  ------  --------------------  -------------  "
            "--------------------------\n"
            "even      manual    3,5                         375.00           312.50          "
            "62.50   37.5%             20.0/10.5              -                           -\n"
            "auto      autopipe  3,5                         375.00           312.50          "
            "62.50   37.5%             20.0/10.5           12.3             450.00 / 500.00\n");
}

TEST(PipelineTableTest, NoPipelinedStrategyNoTable) {
  RunResults r;
  StrategyResult ddp;
  ddp.name = "ddp";
  r.strategies = {ddp};
  EXPECT_EQ(FormatPipelineTable(r), "");
}

TEST(PipelineTableTest, ManyStagesShowAMemoryRangeAndOtherUnitsAreNamed) {
  RunResults r;
  StrategyResult s = Pipelined("deep", "manual");
  s.peak_memory_per_stage_bytes.assign(9, 4 * kGiB);
  s.peak_memory_per_stage_bytes[3] = 6 * kGiB;
  s.pipeline->partition_unit = "blocks";
  r.strategies = {s};
  const std::string t = FormatPipelineTable(r);
  EXPECT_NE(t.find("  partition  "), std::string::npos) << t;
  EXPECT_NE(t.find("3,5 blocks"), std::string::npos) << t;
  EXPECT_NE(t.find("4.0-6.0"), std::string::npos) << t;
}

}  // namespace
}  // namespace stratasim
