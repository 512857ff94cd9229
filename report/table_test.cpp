#include "report/table.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace stratasim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

StrategyResult Ok(const std::string& name, const std::string& kind, double iteration_time_s,
                  double peak_gib) {
  StrategyResult s;
  s.name = name;
  s.kind = kind;
  s.num_gpus = 2;
  s.metrics.iteration_time_s = iteration_time_s;
  s.metrics.samples_per_s = 64 / iteration_time_s;
  s.metrics.tokens_per_s = 64 * 2048 / iteration_time_s;
  s.metrics.model_flops_per_iteration = 1e14;
  s.metrics.tflops_per_gpu = 1e14 / iteration_time_s / 2 / 1e12;
  s.metrics.mfu = s.metrics.tflops_per_gpu / 312;
  s.metrics.hfu = s.metrics.mfu * 4 / 3;
  s.metrics.exposed_comm_fraction = 0.125;
  s.metrics.exposed_comm_by_category = {{"dp", 0.1}, {"tp", 0.025}, {"pp", 0.0001}};
  s.metrics.idle_fraction = 0.05;
  s.metrics.peak_memory_bytes = {peak_gib * kGiB, peak_gib * kGiB / 2};
  return s;
}

RunResults Example() {
  RunResults r;
  r.scenario_name = "gpt-small";
  r.gpu_summary = "1 x 2 A100-SXM4-80GB";
  r.model_summary = "GPT 1.3B, seq 2048";
  r.strategies.push_back(Ok("ddp", "data", 0.5, 30));
  StrategyResult oom = Ok("zero-offload-off", "sharded", 0.4, 90);
  oom.metrics.oom_ranks = {0};
  r.strategies.push_back(oom);
  StrategyResult tp = Ok("megatron-tp2", "tensor", 0.45, 20);
  tp.notes = {"2-way tensor parallel", "sequence parallel off"};
  tp.peak_memory_per_stage_bytes = {20 * kGiB, 12.5 * kGiB};
  r.strategies.push_back(tp);
  StrategyResult bad;
  bad.name = "gpipe";
  bad.kind = "pipeline";
  bad.ok = false;
  bad.error = "4 stages need 4 GPUs, the cluster has 2";
  r.strategies.push_back(bad);
  return r;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The line of the table whose first cell is `name`.
std::string RowOf(const std::string& table, const std::string& name) {
  for (const std::string& line : Lines(table)) {
    if (line.compare(0, name.size() + 1, name + " ") == 0) return line;
  }
  ADD_FAILURE() << "no row for " << name << " in\n" << table;
  return "";
}

TEST(TableTest, GoldenOutput) {
  const char* expected =
      "scenario: gpt-small | GPUs: 1 x 2 A100-SXM4-80GB | model: GPT 1.3B, seq 2048\n"
      "\n"
      "strategy          kind      iter (ms)  samples/s  tokens/s  TFLOP/s/GPU  MFU %  HFU %  "
      "exposed comm %  exposed by kind %  idle %  peak mem/GPU (GiB)  sim   vs best\n"
      "----------------  --------  ---------  ---------  --------  -----------  -----  -----  "
      "--------------  -----------------  ------  ------------------  ----  -------\n"
      "ddp               data         500.00      128.0    262144        100.0   32.1   42.7  "
      "          12.5  dp 10.0 tp 2.5        5.0               30.00  full    1.11x\n"
      "zero-offload-off  sharded      400.00      160.0    327680        125.0   40.1   53.4  "
      "          12.5  dp 10.0 tp 2.5        5.0           90.00 OOM  full    0.89x\n"
      "megatron-tp2      tensor       450.00      142.2    291271        111.1   35.6   47.5  "
      "          12.5  dp 10.0 tp 2.5        5.0               20.00  full    1.00x\n"
      "gpipe             pipeline  FAILED: 4 stages need 4 GPUs, the cluster has 2\n"
      "\n"
      "  zero-offload-off: OOM on rank 0: peak 90.0 GiB\n"
      "  megatron-tp2: peak memory per stage (GiB): 20.00, 12.50\n"
      "  megatron-tp2: 2-way tensor parallel\n"
      "  megatron-tp2: sequence parallel off\n";
  EXPECT_EQ(FormatComparisonTable(Example()), expected);
}

TEST(TableTest, HasEveryColumn) {
  std::string table = FormatComparisonTable(Example());
  for (const char* column :
       {"strategy", "kind", "iter (ms)", "samples/s", "tokens/s", "TFLOP/s/GPU", "MFU %", "HFU %",
        "exposed comm %", "exposed by kind %", "idle %", "peak mem/GPU (GiB)", "sim", "vs best"}) {
    EXPECT_NE(table.find(column), std::string::npos) << column;
  }
}

TEST(TableTest, RowsAlignWithHeader) {
  std::vector<std::string> lines = Lines(FormatComparisonTable(Example()));
  const std::string& header = lines.at(2);
  const std::string& rule = lines.at(3);
  ASSERT_EQ(rule.size(), header.size());
  // Every successful row ends where the header does (the last column is right-aligned), and
  // each right-aligned figure ends where its column's rule ends.
  for (size_t i = 4; i <= 6; ++i) {
    const std::string& row = lines.at(i);
    ASSERT_EQ(row.size(), header.size()) << row;
    for (size_t end = rule.find("- "); end != std::string::npos; end = rule.find("- ", end + 1)) {
      if (end < header.find("iter")) continue;  // strategy and kind are left-aligned
      const size_t by_kind = header.find("exposed by kind");
      if (end >= by_kind && end < header.find("idle")) continue;  // left-aligned too
      EXPECT_NE(row[end], ' ') << "column ending at " << end << " in: " << row;
    }
  }
}

TEST(TableTest, VsBestIsRelativeToFastestFittingStrategy) {
  std::string table = FormatComparisonTable(Example());
  // The out-of-memory strategy is faster but cannot run, so it is not the reference.
  EXPECT_NE(RowOf(table, "megatron-tp2").find("1.00x"), std::string::npos);
  EXPECT_NE(RowOf(table, "ddp").find("1.11x"), std::string::npos);
  EXPECT_NE(RowOf(table, "zero-offload-off").find("0.89x"), std::string::npos);
}

TEST(TableTest, BestIsFastestWhenAllFit) {
  RunResults r = Example();
  r.strategies[1].metrics.oom_ranks.clear();
  std::string table = FormatComparisonTable(r);
  EXPECT_NE(RowOf(table, "zero-offload-off").find("1.00x"), std::string::npos);
  EXPECT_NE(RowOf(table, "ddp").find("1.25x"), std::string::npos);
}

TEST(TableTest, MarksOomOnlyWhereARankOverflows) {
  std::string table = FormatComparisonTable(Example());
  EXPECT_NE(RowOf(table, "zero-offload-off").find("90.00 OOM"), std::string::npos);
  EXPECT_EQ(RowOf(table, "ddp").find("OOM"), std::string::npos);
  EXPECT_EQ(RowOf(table, "megatron-tp2").find("OOM"), std::string::npos);
}

TEST(TableTest, OomNoteNamesTheWorstRankItsPeakAndWhatMadeIt) {
  RunResults r = Example();
  Metrics& m = r.strategies[1].metrics;
  m.peak_memory_bytes = {80 * kGiB, 92.1 * kGiB};
  m.memory_capacity_bytes = {75 * kGiB, 80 * kGiB};
  m.peak_memory_breakdown = {
      {{"activations", 60 * kGiB}, {"weights", 20 * kGiB}},
      {{"activations", 70.2 * kGiB}, {"optimizer", 16.4 * kGiB}, {"weights", 5.5 * kGiB}}};
  m.oom_ranks = {0, 1};
  const std::string table = FormatComparisonTable(r);
  EXPECT_NE(table.find("  zero-offload-off: OOM on 2 ranks, worst rank 1: peak 92.1 GiB > 80.0 "
                       "GiB (activations 70.2, optimizer 16.4, weights 5.5)\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("ddp: OOM"), std::string::npos);
}

TEST(TableTest, FailedStrategyShowsErrorInsteadOfFigures) {
  std::string row = RowOf(FormatComparisonTable(Example()), "gpipe");
  EXPECT_NE(row.find("FAILED: 4 stages need 4 GPUs, the cluster has 2"), std::string::npos);
  EXPECT_EQ(row.find("x"), std::string::npos);  // no "vs best"
}

TEST(TableTest, AllFailedHasNoBest) {
  RunResults r = Example();
  r.strategies.erase(r.strategies.begin(), r.strategies.begin() + 3);
  std::string table = FormatComparisonTable(r);
  EXPECT_NE(table.find("FAILED"), std::string::npos);
  EXPECT_EQ(table.find("1.00x"), std::string::npos);
}

TEST(TableTest, MissingFiguresShowDash) {
  RunResults r = Example();
  r.strategies.resize(1);
  r.strategies[0].metrics.tokens_per_s = 0;  // e.g. a CNN
  r.strategies[0].metrics.peak_memory_bytes.clear();
  std::string row = RowOf(FormatComparisonTable(r), "ddp");
  EXPECT_NE(row.find("  -  "), std::string::npos) << row;
}

TEST(TableTest, NoStrategies) {
  RunResults r = Example();
  r.strategies.clear();
  EXPECT_NE(FormatComparisonTable(r).find("(no strategies)"), std::string::npos);
}

TEST(TableTest, NoTrailingSpaces) {
  for (const std::string& line : Lines(FormatComparisonTable(Example()))) {
    EXPECT_TRUE(line.empty() || line.back() != ' ') << "[" << line << "]";
  }
}

}  // namespace
}  // namespace stratasim
