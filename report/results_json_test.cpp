#include "report/results_json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
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
                                               "notes",
                                               "gpu_memory_capacity_bytes"}));
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
            "mfu,hfu,exposed_comm_fraction,idle_fraction,max_peak_memory_bytes,fold,error,"
            "pipeline.planner,pipeline.partition,pipeline.stages,pipeline.max_stage_compute_s,"
            "pipeline.mean_stage_compute_s,pipeline.startup_s,pipeline.bubble_fraction,"
            "pipeline.predicted_iteration_s,moe.top_k,moe.iteration_time_s.mean,"
            "moe.iteration_time_s.p50,moe.iteration_time_s.p95,moe.iteration_time_s.min,"
            "moe.iteration_time_s.max,moe.tokens_per_s,moe.baseline,moe.speedup,"
            "moe.load_std_before,moe.load_std_after,moe.load_balance_ratio,moe.exposed_a2a_s,"
            "moe.placement_s,moe.placement_exposed_s,moe.peak_memory_bytes,moe.dropped_tokens,"
            "moe.replicas,moe.transfer_bytes,moe.placement_changes,moe.placement_kept_fraction,"
            "moe.transfer_bytes_saved,moe.expert_parallel,moe.expert_data_parallel");
  // A strategy without pipeline or MoE figures leaves their columns empty.
  EXPECT_EQ(row,
            "ddp,data,true,2,0.3,213.333333,436906.667,2500,0.41,0,0.125,0,85899345920,,,,,,,,,," +
                std::string(24, ','));
}

TEST(ResultsCsvTest, QuotesFieldsWithSeparatorsQuotesAndNewlines) {
  std::string csv = ResultsToCsv(Example());
  // The failed row: name with a comma and quotes, error with a comma and a newline, and
  // empty figures.
  EXPECT_NE(
      csv.find("\"pipe, \"\"v2\"\"\",pipeline,false,2,,,,,,,,,,,\"needs 4 GPUs,\nhas 2\",,,,,,,," +
               std::string(24, ',') + "\n"),
      std::string::npos)
      << csv;
  EXPECT_EQ(csv, ResultsToCsv(Example()));
}

// A MoE strategy: its "moe" object's scalars, named as pandas' json_normalize names them, with
// results.json's nulls (no baseline, a perfectly balanced ratio) as empty cells.
TEST(ResultsCsvTest, MoeColumns) {
  RunResults r;
  StrategyResult p;
  p.name = "pro-prophet-top1";
  p.kind = "pro-prophet";
  p.num_gpus = 16;
  p.metrics.iteration_time_s = 0.05;
  MoeSummary m;
  m.top_k = 1;
  m.mean_s = 0.044;
  m.p50_s = 0.0441;
  m.p95_s = 0.0447;
  m.min_s = 0.0435;
  m.max_s = 0.0448;
  m.tokens_per_s = 369437;
  m.baseline = "deepspeed-top1";
  m.speedup = 2.64;
  m.load_std_before = 1445;
  m.load_std_after = 808.5;
  m.load_balance_ratio = 1445 / 808.5;
  m.exposed_a2a_s = 0.018;
  m.placement_s = 0.0086;
  m.placement_exposed_s = 0.006;
  m.peak_memory_bytes = 1105954816;
  m.dropped_tokens = 0;
  m.replicas = 13.2;
  m.transfer_bytes = 421514956.8;
  m.placement_changes = 11.2;
  m.placement_kept_fraction = 0.99;
  m.transfer_bytes_saved = -154400000;
  m.expert_parallel = 16;
  m.expert_data_parallel = 1;
  p.moe = m;
  r.strategies.push_back(p);
  m.baseline.clear();
  m.speedup = 0;
  m.load_balance_ratio = std::numeric_limits<double>::infinity();
  p.name = "perfect";
  p.moe = m;
  r.strategies.push_back(p);
  std::istringstream in(ResultsToCsv(r));
  std::string header, row, perfect;
  std::getline(in, header);
  std::getline(in, row);
  std::getline(in, perfect);
  EXPECT_NE(header.find(",moe.top_k,"), std::string::npos);
  EXPECT_EQ(row.substr(row.find(",16,0.05,")),
            ",16,0.05,0,0,0,0,0,0,0,0,,,,,,,,,,,1,0.044,0.0441,0.0447,0.0435,0.0448,369437,"
            "deepspeed-top1,2.64,1445,808.5,1.78726036,0.018,0.0086,0.006,1105954816,0,13.2,"
            "421514957,11.2,0.99,-154400000,16,1");
  EXPECT_NE(perfect.find(",369437,,,1445,808.5,,0.018,"), std::string::npos) << perfect;
}

// A pipelined strategy: what its plan decided beside what the trace measured of its stages.
RunResults Pipelined(double predicted_s) {
  RunResults r;
  StrategyResult p;
  p.name = "3d";
  p.kind = "3d";
  p.num_gpus = 4;
  p.metrics.iteration_time_s = 0.5;
  p.metrics.stage_compute_s = {0.25, 0.375};
  p.metrics.stage_bubble_fraction = {0.5, 0.25};
  p.metrics.startup_s = 0.0625;
  p.peak_memory_per_stage_bytes = {2.0, 1.0};
  PipelineFigures f;
  f.partition = "3,5";
  f.stages = 2;
  if (predicted_s > 0) {
    f.planner = "autopipe";
    f.planning_s = 0.125;
    f.predicted_stage_s = {0.01, 0.02};
    f.predicted_iteration_s = predicted_s;
  }
  p.pipeline = f;
  r.strategies.push_back(p);
  StrategyResult failed = p;  // a failed strategy's leftovers are not reported
  failed.name = "bad";
  failed.ok = false;
  failed.error = "no";
  r.strategies.push_back(failed);
  return r;
}

TEST(ResultsJsonTest, PipelineMemberHasThePlanAndTheStages) {
  auto j = nlohmann::ordered_json::parse(ResultsToJson(Pipelined(0.4)));
  const auto& p = j["strategies"][0]["pipeline"];
  EXPECT_EQ(Keys(p),
            (std::vector<std::string>{
                "planner", "partition", "partition_unit", "stages", "stage_compute_s",
                "max_stage_compute_s", "mean_stage_compute_s", "startup_s", "stage_bubble_fraction",
                "bubble_fraction", "predicted_stage_s", "predicted_iteration_s"}));
  EXPECT_EQ(p["planner"], "autopipe");
  EXPECT_EQ(p["partition"], "3,5");
  EXPECT_EQ(p["partition_unit"], "layers");
  EXPECT_EQ(p["stages"], 2);
  EXPECT_EQ(p["stage_compute_s"].get<std::vector<double>>(), (std::vector<double>{0.25, 0.375}));
  EXPECT_EQ(p["max_stage_compute_s"].get<double>(), 0.375);
  EXPECT_EQ(p["mean_stage_compute_s"].get<double>(), 0.3125);
  EXPECT_EQ(p["startup_s"].get<double>(), 0.0625);
  EXPECT_EQ(p["bubble_fraction"].get<double>(), 0.375);
  EXPECT_FALSE(p.contains("planning_s"));  // wall-clock: printed, never written
  EXPECT_EQ(p["predicted_stage_s"].get<std::vector<double>>(), (std::vector<double>{0.01, 0.02}));
  EXPECT_EQ(p["predicted_iteration_s"].get<double>(), 0.4);
  // The pipeline member follows the per-stage memory, which stays where it was.
  const std::vector<std::string> keys = Keys(j["strategies"][0]);
  EXPECT_EQ(std::find(keys.begin(), keys.end(), "pipeline") -
                std::find(keys.begin(), keys.end(), "peak_memory_per_stage_bytes"),
            1);
  EXPECT_FALSE(j["strategies"][1].contains("pipeline"));
  // Without a prediction: null.
  EXPECT_TRUE(
      json::parse(ResultsToJson(Pipelined(0)))["strategies"][0]["pipeline"]["predicted_iteration_s"]
          .is_null());
}

TEST(ResultsCsvTest, PipelineColumnsAreAppended) {
  std::istringstream in(ResultsToCsv(Pipelined(0.4)));
  std::string header, row, failed;
  std::getline(in, header);
  std::getline(in, row);
  std::getline(in, failed);
  EXPECT_EQ(row.substr(row.find(",,autopipe")),
            ",,autopipe,\"3,5\",2,0.375,0.3125,0.0625,0.375,0.4" + std::string(24, ','));
  EXPECT_EQ(failed.substr(failed.find(",no,")), ",no,,,,,,,," + std::string(24, ','));
  std::istringstream manual(ResultsToCsv(Pipelined(0)));
  std::getline(manual, header);
  std::getline(manual, row);
  EXPECT_EQ(row.substr(row.find(",,manual")),
            ",,manual,\"3,5\",2,0.375,0.3125,0.0625,0.375," + std::string(24, ','));
}

}  // namespace
}  // namespace stratasim
