#include "search/search_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace stratasim::search {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

RankedPlan Plan(int tensor, int pipeline, double analytic_s, double memory_gib, int rank) {
  RankedPlan p;
  p.plan.tensor = tensor;
  p.plan.pipeline = pipeline;
  p.plan.data = 16 / (tensor * pipeline);
  p.plan.micro_batches = 8;
  p.plan.schedule = pipeline > 1 ? "1f1b" : "";
  p.name = CandidateName(p.plan);
  p.estimate.iteration_s = analytic_s;
  p.estimate.bubble_s = analytic_s / 10;
  p.estimate.exposed_comm_s["tp"] = analytic_s / 20;
  p.estimate.peak_memory_bytes = memory_gib * kGiB;
  p.analytic_rank = rank;
  return p;
}

StrategyResult Simulated(const RankedPlan& p, double seconds, double memory_gib) {
  StrategyResult r;
  r.name = p.name;
  r.kind = "3d";
  r.metrics.iteration_time_s = seconds;
  r.metrics.mfu = 0.4;
  r.metrics.peak_memory_bytes = {memory_gib * kGiB, memory_gib * kGiB / 2};
  r.metrics.exposed_comm_by_category["dp"] = 0.02;
  r.fold = "folded: 2 blocks";
  return r;
}

// Three plans by analytic rank: the analytic best simulates slower than the second; the third
// was not simulated.
SearchOutcome Outcome() {
  SearchOutcome o;
  o.enumerated = 10;
  o.pruned[PruneReason::kMemory] = 4;
  o.pruned[PruneReason::kGpus] = 3;
  o.ranked = {Plan(2, 2, 1.0, 40, 1), Plan(4, 1, 1.1, 30, 2), Plan(1, 4, 1.5, 20, 3)};
  o.ranked[0].simulated = Simulated(o.ranked[0], 1.30, 42);
  o.ranked[1].simulated = Simulated(o.ranked[1], 1.20, 31);
  return o;
}

RunResults Header() {
  RunResults h;
  h.scenario_name = "tiny";
  h.gpu_summary = "2 x 8 A100-SXM4-80GB";
  h.model_summary = "gpt";
  return h;
}

TEST(SearchReportTest, TableRanksBySimulatedTimeAndSaysWhenTheBestsDiffer) {
  const std::string table = FormatSearchTable(Header(), Outcome());
  EXPECT_NE(table.find("space: 10 plans; pruned: 4 out of memory, 3 indivisible GPUs; ranked 3 "
                       "analytically; simulated the best 2 with contention"),
            std::string::npos)
      << table;
  // Rank 1 is the simulated best, the analytic rank 2 plan.
  const size_t first = table.find("\n1 ");
  ASSERT_NE(first, std::string::npos) << table;
  const std::string line = table.substr(first + 1, table.find('\n', first + 1) - first - 1);
  EXPECT_NE(line.find("d4-t4-p1-mb1"), std::string::npos) << line;
  EXPECT_NE(table.find("best: d4-t4-p1-mb1 (simulated; analytic rank 2); the analytic best "
                       "d4-t2-p2-mb1-1f1b simulates at 1300.00 ms"),
            std::string::npos)
      << table;
}

TEST(SearchReportTest, ParetoUsesSimulatedFiguresWhereSimulated) {
  // Simulated (1.20 s, 31 GiB) and (1.30 s, 42 GiB): the latter is beaten on both; the
  // unsimulated plan (1.5 s, 20 GiB) uses the least memory.
  const SearchOutcome o = Outcome();
  EXPECT_EQ(SearchParetoFront(o), (std::vector<size_t>{1, 2}));
  const std::string csv = ParetoCsv(o);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "plan,iteration_s,peak_memory_bytes,simulated,analytic_rank");
  EXPECT_NE(csv.find("d4-t4-p1-mb1,1.2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",false,3\n"), std::string::npos) << csv;
}

TEST(SearchReportTest, JsonHasSpaceBestAndEveryPlan) {
  const nlohmann::json j = nlohmann::json::parse(SearchJson(Header(), Outcome()));
  EXPECT_EQ(j["format"], "stratasim-search");
  EXPECT_EQ(j["space"]["enumerated"], 10);
  EXPECT_EQ(j["space"]["pruned"]["out of memory"], 4);
  EXPECT_EQ(j["plans"].size(), 3u);
  EXPECT_EQ(j["best"]["analytic"], "d4-t2-p2-mb1-1f1b");
  EXPECT_EQ(j["best"]["simulated"], "d4-t4-p1-mb1");
  EXPECT_EQ(j["plans"][1]["simulated"]["rank"], 1);
  EXPECT_TRUE(j["plans"][2]["simulated"].is_null());
  EXPECT_EQ(SearchCsv(Outcome()).find("plan,kind,data,tensor"), 0u);
}

TEST(SearchReportTest, FailedSimulationIsListedLast) {
  SearchOutcome o = Outcome();
  o.ranked[0].simulated->ok = false;
  o.ranked[0].simulated->error = "boom";
  const std::vector<const RankedPlan*> order = SimulatedByTime(o);
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], &o.ranked[1]);
  EXPECT_NE(FormatSearchTable(Header(), o).find("FAILED: boom"), std::string::npos);
}

}  // namespace
}  // namespace stratasim::search
