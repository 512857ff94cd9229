#include "report/jobs_table.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace stratasim {
namespace {

JobsResults Sample() {
  JobsResults r;
  r.scenario_name = "shared";
  r.scenario_file = "shared.yaml";
  r.tool_version = "test";
  r.cluster_gpus = 16;
  PolicyOutcome p;
  p.policy = "packed";
  p.makespan_s = 2.5;
  p.gpu_busy_fraction = 0.5;
  p.allocated_fraction = 0.75;
  JobOutcome a;
  a.name = "gpt";
  a.kind = "3d";
  a.gpus = {0, 1, 2, 3, 8, 9};
  a.shared_iteration_s = 0.3;
  a.alone_iteration_s = 0.2;
  a.slowdown = 1.5;
  JobOutcome b;
  b.name = "moe";
  b.kind = "fastermoe";
  b.gpus = {4, 5};
  b.ok = false;
  b.error = "boom";
  p.jobs = {a, b};
  r.policies = {p};
  return r;
}

TEST(JobsTable, ConsoleTableShowsEachJobAndPolicy) {
  const std::string t = FormatJobsTable(Sample());
  EXPECT_NE(t.find("policy  job  kind       GPUs"), std::string::npos) << t;
  EXPECT_NE(t.find("0-3,8-9"), std::string::npos) << t;
  EXPECT_NE(t.find("300.000"), std::string::npos) << t;
  EXPECT_NE(t.find("1.500x"), std::string::npos) << t;
  EXPECT_NE(t.find("50.0%"), std::string::npos) << t;
  EXPECT_NE(t.find("packed / moe: boom"), std::string::npos) << t;
}

TEST(JobsTable, JsonAndCsvCarryTheFigures) {
  const auto j = nlohmann::json::parse(JobsResultsToJson(Sample()));
  EXPECT_EQ(j["format"], "stratasim-jobs-results");
  EXPECT_EQ(j["policies"][0]["policy"], "packed");
  EXPECT_DOUBLE_EQ(j["policies"][0]["gpu_busy_fraction"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["policies"][0]["jobs"][0]["slowdown"].get<double>(), 1.5);
  EXPECT_TRUE(j["policies"][0]["jobs"][1]["slowdown"].is_null());
  EXPECT_EQ(j["policies"][0]["jobs"][1]["error"], "boom");
  const std::string csv = JobsResultsToCsv(Sample());
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "policy,job,kind,gpus,arrival_s,shared_iteration_time_s,alone_iteration_time_s,"
            "slowdown,makespan_s,gpu_busy_fraction,allocated_fraction,ok");
  EXPECT_NE(csv.find("packed,moe,fastermoe,4-5,0,,,,2.5,0.5,0.75,false"), std::string::npos) << csv;
}

}  // namespace
}  // namespace stratasim
