#include "report/compare.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"

namespace stratasim {
namespace {

using Json = nlohmann::ordered_json;

// A results.json as stratasim run writes it (docs/report-formats.md), with the figures compare
// reads.
Json Results(double iteration_s, double exposed = 0.1) {
  Json s;
  s["name"] = "ddp";
  s["kind"] = "data";
  s["ok"] = true;
  s["num_gpus"] = 8;
  s["iteration_time_s"] = iteration_s;
  s["samples_per_s"] = 64 / iteration_s;
  s["tokens_per_s"] = 0;
  s["mfu"] = 0.3;
  s["exposed_comm_fraction"] = exposed;
  s["exposed_comm_by_category"] = {{"dp", exposed}};
  s["idle_fraction"] = 0.0;
  s["max_peak_memory_bytes"] = 1e10;
  Json r;
  r["format"] = "stratasim-results";
  r["version"] = 1;
  r["tool_version"] = "0.1.0";
  r["scenario"] = {{"name", "q"},
                   {"file", "scenarios/q.yaml"},
                   {"seed", 42},
                   {"gpus", "1 x 8 A100"},
                   {"model", "gpt"}};
  r["strategies"] = Json::array({s});
  return r;
}

CompareInput Side(const std::string& path, const Json& j) {
  CompareInput in;
  in.path = path;
  in.json = j.dump(2);
  return in;
}

CompareOutcome CompareOf(const Json& a, const Json& b, CompareOptions o = {}) {
  return CompareResults(Side("a/results.json", a), Side("b/results.json", b), o);
}

TEST(Compare, IdenticalRunsHaveNoRegression) {
  const CompareOutcome c = CompareOf(Results(1.0), Results(1.0));
  EXPECT_EQ(c.regressions, 0);
  EXPECT_NE(c.text.find("no figure regressed past the threshold"), std::string::npos) << c.text;
  EXPECT_EQ(c.text.find("REGRESSED"), std::string::npos) << c.text;
}

TEST(Compare, SlowerIterationPastThresholdRegresses) {
  const CompareOutcome c = CompareOf(Results(1.0), Results(1.1));
  // Iteration time +10% and samples/s -9.09%: both past 5%.
  EXPECT_EQ(c.regressions, 2) << c.text;
  EXPECT_NE(c.text.find("ddp iteration_time_s +10.00%"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("ddp samples_per_s -9.09%"), std::string::npos) << c.text;
  CompareOptions loose;
  loose.threshold_pct = 10.5;
  EXPECT_EQ(CompareOf(Results(1.0), Results(1.1), loose).regressions, 0);
}

TEST(Compare, FasterIsMarkedImprovedNotCounted) {
  const CompareOutcome c = CompareOf(Results(1.0), Results(0.8));
  EXPECT_EQ(c.regressions, 0);
  EXPECT_NE(c.text.find("improved"), std::string::npos) << c.text;
}

TEST(Compare, FractionsAreJudgedInPercentagePoints) {
  // 0.10 -> 0.14 is +40% relative but +4 points: under a 5 threshold.
  CompareOptions o;
  o.metrics = {"exposed_comm_fraction"};
  EXPECT_EQ(CompareOf(Results(1.0, 0.10), Results(1.0, 0.14), o).regressions, 0);
  const CompareOutcome c = CompareOf(Results(1.0, 0.10), Results(1.0, 0.16), o);
  EXPECT_EQ(c.regressions, 1) << c.text;
  EXPECT_NE(c.text.find("ddp exposed_comm_fraction +6.00 points"), std::string::npos) << c.text;
}

TEST(Compare, MetricSelectsRowsAndCategories) {
  CompareOptions o;
  o.metrics = {"exposed_comm_by_category"};
  const CompareOutcome c = CompareOf(Results(1.0), Results(2.0), o);
  EXPECT_EQ(c.regressions, 0) << c.text;  // the iteration time is not judged
  EXPECT_NE(c.text.find("exposed_comm_by_category.dp"), std::string::npos) << c.text;
  EXPECT_EQ(c.text.find("iteration_time_s"), std::string::npos) << c.text;
  EXPECT_TRUE(IsCompareFigure("exposed_comm_by_category.tp"));
  EXPECT_TRUE(IsCompareFigure("moe.iteration_time_s.p95"));
  EXPECT_FALSE(IsCompareFigure("speed"));
}

TEST(Compare, StrategiesMatchedByName) {
  Json b = Results(1.0);
  b["strategies"][0]["name"] = "fsdp";
  const CompareOutcome c = CompareOf(Results(1.0), b);
  EXPECT_NE(c.text.find("only in A: ddp\n"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("only in B: fsdp\n"), std::string::npos) << c.text;
  EXPECT_EQ(c.regressions, 0);
}

TEST(Compare, StrategyThatStopsWorkingRegresses) {
  Json b = Results(1.0);
  b["strategies"][0]["ok"] = false;
  b["strategies"][0]["error"] = "out of memory";
  const CompareOutcome c = CompareOf(Results(1.0), b);
  EXPECT_EQ(c.regressions, 1);
  EXPECT_NE(c.text.find("B: failed: out of memory"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("ddp (fails in B)"), std::string::npos) << c.text;
  // The other way round is no regression.
  EXPECT_EQ(CompareOf(b, Results(1.0)).regressions, 0);
}

TEST(Compare, ScenarioChangesAndFileKeys) {
  Json b = Results(1.0);
  b["scenario"]["gpus"] = "2 x 8 A100";
  CompareInput sa = Side("a/results.json", Results(1.0));
  CompareInput sb = Side("b/results.json", b);
  sa.scenario_path = "a/q.yaml";
  sa.scenario_yaml = "cluster:\n  servers: 1\n  gpu: A100\ntraining:\n  batch: 64\n";
  sb.scenario_path = "b/q.yaml";
  sb.scenario_yaml = "cluster:\n  servers: 2\n  gpu: A100\nnew_key: 1\n";
  const CompareOutcome c = CompareResults(sa, sb, {});
  EXPECT_NE(c.text.find("gpus          1 x 8 A100        2 x 8 A100        changed\n"),
            std::string::npos)
      << c.text;
  EXPECT_NE(c.text.find("cluster.servers    1         2\n"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("training.batch     64        (absent)\n"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("new_key            (absent)  1\n"), std::string::npos) << c.text;
  const Json j = Json::parse(c.json);
  EXPECT_EQ(j["format"], "stratasim-compare");
  EXPECT_EQ(j["scenario_file_keys"].size(), 3u);
}

TEST(Compare, DeterministicTextAndJson) {
  const CompareOutcome x = CompareOf(Results(1.0), Results(1.2));
  const CompareOutcome y = CompareOf(Results(1.0), Results(1.2));
  EXPECT_EQ(x.text, y.text);
  EXPECT_EQ(x.json, y.json);
  const Json j = Json::parse(x.json);
  EXPECT_EQ(j["regressions"].size(), 2u);
  EXPECT_EQ(j["strategies"][0]["figures"][0]["name"], "iteration_time_s");
  EXPECT_EQ(j["strategies"][0]["figures"][0]["verdict"], "REGRESSED");
}

std::string ErrorOf(const std::string& a_text) {
  CompareInput a;
  a.path = "a.json";
  a.json = a_text;
  try {
    CompareResults(a, Side("b.json", Results(1.0)), {});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Compare, BadInputsNameTheFile) {
  Json links = Results(1.0);
  links["format"] = "stratasim-links";
  EXPECT_EQ(ErrorOf(links.dump()),
            "a.json: format = \"stratasim-links\": must be \"stratasim-results\" (a results.json "
            "of stratasim run)");
  Json v2 = Results(1.0);
  v2["version"] = 2;
  EXPECT_EQ(ErrorOf(v2.dump()), "a.json: version = \"2\": this stratasim reads version 1");
  Json none = Results(1.0);
  none.erase("format");
  EXPECT_EQ(ErrorOf(none.dump()), "a.json: format: missing: not a results.json of stratasim run");
  EXPECT_EQ(ErrorOf("{\"format\": "),
            "a.json: <document>: not JSON: [json.exception.parse_error.101] parse error at line "
            "1, column 12: syntax error while parsing value - unexpected end of input; expected "
            "'[', '{', or a literal");
  Json bad_figure = Results(1.0);
  bad_figure["strategies"][0]["mfu"] = "high";
  EXPECT_EQ(ErrorOf(bad_figure.dump()),
            "a.json: strategies[0].mfu = \"\"high\"\": must be a number");
}

TEST(Compare, BadScenarioFileIsLocated) {
  CompareInput sa = Side("a/results.json", Results(1.0));
  CompareInput sb = Side("b/results.json", Results(1.0));
  sa.scenario_path = "a/q.yaml";
  sa.scenario_yaml = "a: [1\n";
  sb.scenario_path = "b/q.yaml";
  sb.scenario_yaml = "a: 1\n";
  try {
    CompareResults(sa, sb, {});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("a/q.yaml:", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace stratasim
