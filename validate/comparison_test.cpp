#include "validate/comparison.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace stratasim::validate {
namespace {

// Two ranks, two iterations (warm-up 0, measured 1): a GEMM then an all-reduce per rank and
// iteration.
TaskGraph Graph() {
  TaskGraph g(2);
  const int compute = g.Stream("compute"), comm = g.Stream("comm");
  for (int it = 0; it < 2; ++it) {
    std::vector<TaskId> gemm;
    for (int r = 0; r < 2; ++r) {
      Task t;
      t.rank = r;
      t.stream = compute;
      t.iteration = it;
      t.op = OpKind::kGemm;
      t.name = "gemm";
      gemm.push_back(g.Add(t));
    }
    Collective c;
    c.ranks = {0, 1};
    c.bytes = 1e6;
    Task m;
    m.stream = comm;
    m.iteration = it;
    m.name = "ar";
    const auto ar = g.AddCollective(c, m);
    g.AddDep(ar[0], gemm[0]);
    g.AddDep(ar[1], gemm[1]);
  }
  return g;
}

// Iteration i of `period` seconds: GEMMs take `gemm` seconds, the all-reduce the rest, with
// rank 1 joining `late` seconds after rank 0.
ExecutionTrace Trace(const TaskGraph& g, double period, double gemm, double late) {
  ExecutionTrace t;
  t.num_ranks = 2;
  t.streams = g.streams();
  for (const Task& task : g.tasks()) {
    TraceRecord r;
    r.task = task.id;
    r.rank = task.rank;
    r.stream = task.stream;
    const double base = task.iteration * period;
    if (task.kind == TaskKind::kCompute) {
      r.start_s = r.peers_joined_s = base;
      r.end_s = base + gemm + (task.rank == 1 ? late : 0);
    } else {
      r.start_s = base + gemm + (task.rank == 1 ? late : 0);
      r.peers_joined_s = base + gemm + late;
      r.end_s = base + period;
    }
    t.records.push_back(r);
  }
  return t;
}

TEST(Comparison, ErrorPercentIsRelativeToTheMeasurement) {
  EXPECT_DOUBLE_EQ(ErrorPercent(150, 100), 50);
  EXPECT_DOUBLE_EQ(ErrorPercent(50, 100), -50);
  EXPECT_DOUBLE_EQ(ErrorPercent(0, 0), 0);
  EXPECT_DOUBLE_EQ(ErrorPercent(1, 0), 100);
}

TEST(Comparison, PerKindTimesArePerRankAndIterationAndSkipWarmup) {
  const TaskGraph g = Graph();
  // Measured: 10 ms iterations, 6 ms GEMMs (rank 1 2 ms late); simulated: 8 ms, 5 ms, none late.
  const ExecutionTrace measured = Trace(g, 0.010, 0.006, 0.002);
  const ExecutionTrace simulated = Trace(g, 0.008, 0.005, 0.0);
  StrategyValidation v;
  CompareTraces(g, measured, simulated, nullptr, 1, 1, &v);
  EXPECT_NEAR(v.measured_iteration_s, 0.010, 1e-12);
  EXPECT_NEAR(v.simulated_iteration_s, 0.008, 1e-12);
  ASSERT_EQ(v.kinds.size(), 2u);
  EXPECT_EQ(v.kinds[0].kind, "gemm");
  EXPECT_EQ(v.kinds[0].tasks, 2);
  EXPECT_NEAR(v.kinds[0].measured_s, (0.006 + 0.008) / 2, 1e-12);  // rank 1's GEMM is longer
  EXPECT_NEAR(v.kinds[0].simulated_s, 0.005, 1e-12);
  EXPECT_EQ(v.kinds[1].kind, "all_reduce");
  // Counted from when both had joined (8 ms), not from rank 0's arrival at 6 ms.
  EXPECT_NEAR(v.kinds[1].measured_s, 0.002, 1e-12);
  EXPECT_NEAR(v.kinds[1].simulated_s, 0.003, 1e-12);
  EXPECT_FALSE(v.has_default);
}

TEST(Comparison, TableShowsMeasuredAndSimulatedSideBySide) {
  const TaskGraph g = Graph();
  ValidationReport r;
  r.scenario = "s";
  r.backend = "host";
  r.hardware = "cpu, 2 threads";
  r.ranks = 2;
  r.warmup_iterations = 1;
  r.measured_iterations = 1;
  StrategyValidation v;
  v.name = "ddp";
  v.measured = v.simulated = true;
  CompareTraces(g, Trace(g, 0.010, 0.006, 0.002), Trace(g, 0.008, 0.005, 0.0), nullptr, 1, 1, &v);
  r.strategies.push_back(v);
  StrategyValidation failed;
  failed.name = "big";
  failed.error = "out of memory: x";
  r.strategies.push_back(failed);
  EXPECT_EQ(FormatValidationTable(r),
            "scenario: s | backend: host (cpu, 2 threads) | ranks: 2 | iterations: 1 warm-up + "
            "1 measured | cost model: defaults\n"
            "\n"
            "strategy  what          tasks  measured (ms)  simulated (ms)  error %\n"
            "--------  ------------  -----  -------------  --------------  -------\n"
            "ddp       iteration                   10.000           8.000    -20.0\n"
            "            gemm            2          7.000           5.000    -28.6\n"
            "            all_reduce      2          2.000           3.000    +50.0\n"
            "big       FAILED: out of memory: x\n"
            "\n"
            "error % = (simulated - measured) / measured; per-kind times are per rank and "
            "iteration, collectives counted from when all members had joined.\n");
}

TEST(Comparison, CalibratedRunsShowTheDefaultsToo) {
  const TaskGraph g = Graph();
  ValidationReport r;
  r.scenario = "s";
  r.backend = "host";
  r.hardware = "cpu";
  r.calibration = "cal.yaml";
  StrategyValidation v;
  v.name = "ddp";
  v.measured = v.simulated = true;
  const ExecutionTrace defaults = Trace(g, 0.004, 0.002, 0.0);
  CompareTraces(g, Trace(g, 0.010, 0.006, 0.0), Trace(g, 0.009, 0.005, 0.0), &defaults, 1, 1, &v);
  EXPECT_TRUE(v.has_default);
  EXPECT_NEAR(v.default_iteration_s, 0.004, 1e-12);
  r.strategies.push_back(v);
  const std::string table = FormatValidationTable(r);
  EXPECT_NE(table.find("cost model: calibration cal.yaml"), std::string::npos) << table;
  EXPECT_NE(table.find("default sim (ms)  error %  calibrated sim (ms)  error %"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("10.000             4.000    -60.0                9.000    -10.0"),
            std::string::npos)
      << table;
  const std::string text = ValidationToJson(r);
  SCOPED_TRACE(text);
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["format"], "stratasim-validation");
  ASSERT_TRUE(j["strategies"][0]["iteration"].contains("default_error_percent"));
  EXPECT_NEAR(j["strategies"][0]["iteration"]["default_error_percent"].get<double>(), -60, 1e-9);
  EXPECT_NEAR(j["strategies"][0]["iteration"]["error_percent"].get<double>(), -10, 1e-9);
  EXPECT_EQ(j["strategies"][0]["kinds"][0]["kind"], "gemm");
}

TEST(Comparison, AShrunkPlanSaysWhatWasShrunkAndShowsTheFullPlansTime) {
  const TaskGraph g = Graph();
  ValidationReport r;
  r.scenario = "s";
  r.backend = "host";
  r.hardware = "cpu";
  r.ranks = 2;
  StrategyValidation v;
  v.name = "ddp";
  v.measured = v.simulated = true;
  CompareTraces(g, Trace(g, 0.010, 0.006, 0.0), Trace(g, 0.008, 0.005, 0.0), nullptr, 1, 1, &v);
  v.fit_changes = {"data-parallel replicas 8 -> 2", "GPUs 8 -> 2 (servers 1 -> 1)"};
  v.full_gpus = 8;
  v.fit_gpus = 2;
  v.full_simulated = true;
  v.full_simulated_iteration_s = 0.0125;
  r.strategies.push_back(v);
  StrategyValidation unsimulated = v;
  unsimulated.name = "big";
  unsimulated.full_simulated = false;
  unsimulated.full_error = "cannot be planned: x";
  r.strategies.push_back(unsimulated);
  const std::string table = FormatValidationTable(r);
  // The full plan's row has its simulated time only: nothing of it was measured.
  EXPECT_NE(
      table.find("ddp       iteration                        10.000           8.000    -20.0\n"
                 "          full plan, 8 GPUs                                12.500\n"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("shrunk to fit (--fit; measured and simulated above: the shrunk plan):\n"
                       "  ddp: ran on 2 of the plan's 8 GPUs:\n"
                       "    data-parallel replicas 8 -> 2\n"
                       "    GPUs 8 -> 2 (servers 1 -> 1)\n"
                       "    full plan (8 GPUs, the scenario's cluster): simulated iteration 12.500 "
                       "ms\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("    full plan (8 GPUs, the scenario's cluster): not simulated: cannot be "
                       "planned: x\n"),
            std::string::npos)
      << table;
  const auto j = nlohmann::json::parse(ValidationToJson(r));
  const auto& fit = j["strategies"][0]["fit"];
  EXPECT_EQ(fit["gpus"], 2);
  EXPECT_EQ(fit["full_gpus"], 8);
  EXPECT_EQ(fit["changes"][0], "data-parallel replicas 8 -> 2");
  EXPECT_NEAR(fit["full_plan"]["simulated_iteration_s"].get<double>(), 0.0125, 1e-12);
  EXPECT_EQ(j["strategies"][1]["fit"]["full_plan"]["error"], "cannot be planned: x");
  // A plan that ran as written has no "fit".
  r.strategies.resize(1);
  r.strategies[0].fit_changes.clear();
  EXPECT_FALSE(nlohmann::json::parse(ValidationToJson(r))["strategies"][0].contains("fit"));
  EXPECT_EQ(FormatValidationTable(r).find("full plan"), std::string::npos);
}

}  // namespace
}  // namespace stratasim::validate
