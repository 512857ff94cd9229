#include "report/results_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace stratasim {
namespace {

using nlohmann::json;

RunResults Example() {
  RunResults r;
  r.scenario_name = "gpt-small";
  r.scenario_file = "scenarios/examples/gpt-small.yaml";
  r.seed = 18446744073709551615ull;  // the largest seed must survive as an exact integer
  r.tool_version = "0.1.0";
  r.gpu_summary = "1 x 2 A100-SXM4-80GB";
  r.model_summary = "GPT 1.3B";

  StrategyResult ddp;
  ddp.name = "ddp";
  ddp.kind = "data";
  ddp.num_gpus = 2;
  ddp.metrics.iteration_time_s = 0.1 + 0.2;  // not exactly 0.3: must round-trip
  ddp.metrics.samples_per_s = 213.33333333333334;
  ddp.metrics.tokens_per_s = 436906.6666666667;
  ddp.metrics.model_flops_per_iteration = 1.5e15;
  ddp.metrics.tflops_per_gpu = 2500.0;
  ddp.metrics.mfu = 0.41;
  ddp.metrics.exposed_comm_fraction = 0.125;
  ddp.metrics.peak_memory_bytes = {85899345920.0, 1024.5};
  ddp.metrics.oom_ranks = {0};
  ddp.notes = {"bucket 25 MiB", "overlap on"};
  r.strategies.push_back(ddp);

  StrategyResult bad;
  bad.name = "pipe, \"v2\"";
  bad.kind = "pipeline";
  bad.num_gpus = 2;
  bad.ok = false;
  bad.error = "needs 4 GPUs,\nhas 2";
  bad.metrics.iteration_time_s = 99;  // stale figure of a failed run: must not be reported
  r.strategies.push_back(bad);
  return r;
}

std::vector<std::string> Keys(const nlohmann::ordered_json& object) {
  std::vector<std::string> keys;
  for (const auto& item : object.items()) keys.push_back(item.key());
  return keys;
}

TEST(ResultsJsonTest, ParsesBackWithEveryKeyInOrder) {
  // Parsed with ordered_json to check the documented key order too.
  auto j = nlohmann::ordered_json::parse(ResultsToJson(Example()));
  EXPECT_EQ(Keys(j), (std::vector<std::string>{"format", "version", "tool_version", "scenario",
                                               "strategies"}));
  EXPECT_EQ(Keys(j["scenario"]),
            (std::vector<std::string>{"name", "file", "seed", "gpus", "model"}));

  std::vector<std::string> ok_keys = Keys(j["strategies"][0]);
  EXPECT_EQ(ok_keys, (std::vector<std::string>{"name",
                                               "kind",
                                               "ok",
                                               "num_gpus",
                                               "iteration_time_s",
                                               "samples_per_s",
                                               "tokens_per_s",
                                               "model_flops_per_iteration",
                                               "tflops_per_gpu",
                                               "mfu",
                                               "hfu",
                                               "exposed_comm_fraction",
                                               "exposed_comm_by_category",
                                               "idle_fraction",
                                               "peak_memory_bytes",
                                               "max_peak_memory_bytes",
                                               "oom_ranks",
                                               "peak_memory_per_stage_bytes",
                                               "fold",
                                               "simulation",
                                               "notes"}));
  // A failed strategy has the same keys plus "error" after "ok".
  ok_keys.insert(ok_keys.begin() + 3, "error");
  EXPECT_EQ(Keys(j["strategies"][1]), ok_keys);
}

TEST(ResultsJsonTest, ValuesRoundTrip) {
  RunResults r = Example();
  json j = json::parse(ResultsToJson(r));
  EXPECT_EQ(j["format"], "stratasim-results");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["tool_version"], "0.1.0");
  EXPECT_EQ(j["scenario"]["name"], "gpt-small");
  EXPECT_EQ(j["scenario"]["file"], "scenarios/examples/gpt-small.yaml");
  EXPECT_EQ(j["scenario"]["seed"].get<std::uint64_t>(), r.seed);
  EXPECT_EQ(j["scenario"]["gpus"], "1 x 2 A100-SXM4-80GB");
  EXPECT_EQ(j["scenario"]["model"], "GPT 1.3B");

  const json& s = j["strategies"][0];
  const Metrics& m = r.strategies[0].metrics;
  EXPECT_EQ(s["name"], "ddp");
  EXPECT_EQ(s["kind"], "data");
  EXPECT_EQ(s["ok"], true);
  EXPECT_FALSE(s.contains("error"));
  EXPECT_EQ(s["num_gpus"], 2);
  // Exact equality: the printed doubles must round-trip.
  EXPECT_EQ(s["iteration_time_s"].get<double>(), m.iteration_time_s);
  EXPECT_EQ(s["samples_per_s"].get<double>(), m.samples_per_s);
  EXPECT_EQ(s["tokens_per_s"].get<double>(), m.tokens_per_s);
  EXPECT_EQ(s["model_flops_per_iteration"].get<double>(), 1.5e15);
  EXPECT_EQ(s["tflops_per_gpu"].get<double>(), 2500.0);
  EXPECT_EQ(s["mfu"].get<double>(), 0.41);
  EXPECT_EQ(s["exposed_comm_fraction"].get<double>(), 0.125);
  EXPECT_EQ(s["peak_memory_bytes"].get<std::vector<double>>(), m.peak_memory_bytes);
  EXPECT_EQ(s["max_peak_memory_bytes"].get<double>(), 85899345920.0);
  EXPECT_EQ(s["oom_ranks"].get<std::vector<int>>(), std::vector<int>{0});
  EXPECT_EQ(s["notes"].get<std::vector<std::string>>(),
            (std::vector<std::string>{"bucket 25 MiB", "overlap on"}));
}

TEST(ResultsJsonTest, FailedStrategyHasErrorAndNoFigures) {
  json s = json::parse(ResultsToJson(Example()))["strategies"][1];
  EXPECT_EQ(s["ok"], false);
  EXPECT_EQ(s["error"], "needs 4 GPUs,\nhas 2");
  EXPECT_EQ(s["name"], "pipe, \"v2\"");
  EXPECT_TRUE(s["iteration_time_s"].is_null());
  EXPECT_TRUE(s["max_peak_memory_bytes"].is_null());
  EXPECT_TRUE(s["peak_memory_bytes"].empty());
  EXPECT_TRUE(s["oom_ranks"].empty());
}

TEST(ResultsJsonTest, Deterministic) {
  EXPECT_EQ(ResultsToJson(Example()), ResultsToJson(Example()));
  std::string text = ResultsToJson(Example());
  EXPECT_EQ(text.back(), '\n');
}

TEST(ResultsJsonTest, EmptyRun) {
  json j = json::parse(ResultsToJson(RunResults{}));
  EXPECT_TRUE(j["strategies"].is_array());
  EXPECT_TRUE(j["strategies"].empty());
}

TEST(ResultsCsvTest, HeaderAndRows) {
  std::string csv = ResultsToCsv(Example());
  std::istringstream in(csv);
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_EQ(header,
            "name,kind,ok,num_gpus,iteration_time_s,samples_per_s,tokens_per_s,tflops_per_gpu,"
            "mfu,hfu,exposed_comm_fraction,idle_fraction,max_peak_memory_bytes,fold,error");
  EXPECT_EQ(row, "ddp,data,true,2,0.3,213.333333,436906.667,2500,0.41,0,0.125,0,85899345920,,");
}

TEST(ResultsCsvTest, QuotesFieldsWithSeparatorsQuotesAndNewlines) {
  std::string csv = ResultsToCsv(Example());
  // The failed row: name with a comma and quotes, error with a comma and a newline, and
  // empty figures.
  EXPECT_NE(csv.find("\"pipe, \"\"v2\"\"\",pipeline,false,2,,,,,,,,,,,\"needs 4 GPUs,\nhas 2\"\n"),
            std::string::npos)
      << csv;
  EXPECT_EQ(csv, ResultsToCsv(Example()));
}

}  // namespace
}  // namespace stratasim
