// The HTML report's pieces: the data gathered from an outputs folder (report_inputs.h), the
// trace excerpt (trace_excerpt.h) and the page (html_report.h). Fixtures are written by hand in
// the formats of docs/report-formats.md; tests/html_report_browser_test.sh opens real reports.
#include "report/html_report.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "core/link_usage.h"
#include "report/report_inputs.h"
#include "report/trace_excerpt.h"

namespace stratasim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text.substr(0, 400) << "\" does not contain \"" << part << "\"";
}

const char* kResults = R"({
  "format": "stratasim-results", "version": 1, "tool_version": "0.1.0",
  "scenario": {"name": "tiny", "file": "tiny.yaml", "seed": 1, "gpus": "1 x 4 A100",
               "model": "gpt </script><b>x</b>"},
  "strategies": [
    {"name": "ddp", "kind": "data", "ok": true, "num_gpus": 4, "iteration_time_s": 2.0,
     "samples_per_s": 8, "tokens_per_s": 0, "mfu": 0.4, "exposed_comm_fraction": 0.25,
     "exposed_comm_by_category": {"dp": 0.2, "tp": 0.1}, "idle_fraction": 0.25,
     "peak_memory_bytes": [10, 20, 30, 40], "max_peak_memory_bytes": 40, "oom_ranks": [],
     "peak_memory_per_stage_bytes": [], "gpu_memory_capacity_bytes": [50, 50, 35, 50],
     "notes": []},
    {"name": "pp", "kind": "pipeline", "ok": true, "num_gpus": 4, "iteration_time_s": 1.0,
     "samples_per_s": 16, "tokens_per_s": 0, "mfu": 0.8, "exposed_comm_fraction": 0,
     "exposed_comm_by_category": {}, "idle_fraction": 0.5,
     "peak_memory_bytes": [1, 2, 3, 4], "max_peak_memory_bytes": 4, "oom_ranks": [],
     "peak_memory_per_stage_bytes": [3, 4], "gpu_memory_capacity_bytes": [8, 8, 8, 8],
     "moe": {"iteration_time_s": {"each": [1.0, 1.5]},
             "gpu_tokens_per_iteration": [[1, 2, 3, 4], [4, 4, 4, 4]]},
     "notes": []},
    {"name": "bad", "kind": "tensor", "ok": false, "error": "does not divide", "num_gpus": 4,
     "iteration_time_s": null, "exposed_comm_by_category": {}, "peak_memory_bytes": [],
     "oom_ranks": [], "peak_memory_per_stage_bytes": [], "notes": []}
  ]
})";

// Two GPUs, two iterations; the report keeps iteration 1 of the GPUs it is asked for.
const char* kTrace =
    R"({"traceEvents":[{"name":"fwd","cat":"compute","ph":"X","pid":0,"tid":0,"ts":0.0,"dur":5.0,"args":{"iteration":0,"phase":"forward"}},
{"name":"fwd","cat":"compute","ph":"X","pid":0,"tid":0,"ts":100.0,"dur":50.0,"args":{"iteration":1,"phase":"forward"}},
{"name":"ar","cat":"collective","ph":"X","pid":0,"tid":1,"ts":150.0,"dur":30.0,"args":{"iteration":1,"phase":"communication","category":"dp","peer":1}},
{"name":"fwd","cat":"compute","ph":"X","pid":1,"tid":0,"ts":110.0,"dur":50.0,"args":{"iteration":1,"phase":"forward"}},
{"name":"memory","ph":"C","pid":0,"ts":0.0,"args":{"allocated_GiB":1.0}},
{"name":"thread_name","ph":"M","pid":0,"tid":0,"args":{"name":"compute"}},
{"name":"thread_name","ph":"M","pid":0,"tid":1,"args":{"name":"comm"}}],
"displayTimeUnit":"ms","otherData":{"executor":"simgrid","makespan_s":0.0002}}
)";

std::string Links() {
  LinkUsage u;
  u.edges_s = {0, 1, 2};
  u.links.push_back({"s0_nic0_UP", "server 0 NIC 0", 100, 150, {100, 50}});
  u.links_used = 1;
  u.bytes_total = 150;
  return std::string(R"({"format": "stratasim-links", "version": 1, "strategies": [)") +
         R"({"name": "ddp", "usage": )" + LinkUsageToJson(u) +
         R"(}, {"name": "pp", "usage": null}]})";
}

class HtmlReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "stratasim-html-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    Write("results.json", kResults);
    Write("links.json", Links());
    Write("ddp.trace.json", kTrace);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  }
  Json Data(ReportOptions o = {}) { return Json::parse(ReportDataJson(dir_, o)); }
  std::string ErrorOf(ReportOptions o = {}) {
    try {
      ReportDataJson(dir_, o);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  std::string dir_;
};

TEST_F(HtmlReportTest, BreakdownIsSecondsOfTheIterationWithKindsScaledToTheExposedShare) {
  const Json b = Data()["strategies"][0]["breakdown"];
  EXPECT_DOUBLE_EQ(b["compute_s"].get<double>(), 1.0);  // (1 - 0.25 - 0.25) * 2 s
  EXPECT_DOUBLE_EQ(b["idle_s"].get<double>(), 0.5);
  // dp and tp overlap (0.2 + 0.1 > 0.25): scaled to share the exposed 0.5 s as 2 : 1.
  EXPECT_DOUBLE_EQ(b["exposed_comm_s"]["dp"].get<double>(), 0.5 * 2 / 3);
  EXPECT_DOUBLE_EQ(b["exposed_comm_s"]["tp"].get<double>(), 0.5 / 3);
}

TEST_F(HtmlReportTest, MemoryPerStageForPipelinesPerRankOtherwiseWithCapacity) {
  const Json d = Data();
  const Json ddp = d["strategies"][0]["memory"];
  EXPECT_EQ(ddp["per"], "rank");
  EXPECT_EQ(ddp["peak_bytes"], Json::array({10, 20, 30, 40}));
  EXPECT_EQ(ddp["capacity_bytes"], Json::array({50, 50, 35, 50}));
  const Json pp = d["strategies"][1]["memory"];
  EXPECT_EQ(pp["per"], "stage");
  EXPECT_EQ(pp["labels"], Json::array({"stage 0", "stage 1"}));
  EXPECT_EQ(pp["peak_bytes"], Json::array({3, 4}));
  // Many ranks are grouped, each group showing its largest peak and smallest capacity.
  ReportOptions o;
  o.max_memory_bars = 2;
  const Json grouped = Data(o)["strategies"][0]["memory"];
  EXPECT_EQ(grouped["per"], "ranks");
  EXPECT_EQ(grouped["labels"], Json::array({"GPUs 0–1", "GPUs 2–3"}));
  EXPECT_EQ(grouped["peak_bytes"], Json::array({20, 40}));
  EXPECT_EQ(grouped["capacity_bytes"], Json::array({50, 35}));
}

TEST_F(HtmlReportTest, FailedStrategyKeepsItsErrorAndNoFigures) {
  const Json s = Data()["strategies"][2];
  EXPECT_EQ(s["ok"], false);
  EXPECT_EQ(s["error"], "does not divide");
  EXPECT_FALSE(s.contains("breakdown"));
}

TEST_F(HtmlReportTest, MoeIterationTimesAndPerGpuTokens) {
  const Json m = Data()["strategies"][1]["moe"];
  EXPECT_EQ(m["iteration_s"], Json::array({1.0, 1.5}));
  EXPECT_EQ(m["gpu_tokens_per_iteration"][0], Json::array({1, 2, 3, 4}));
}

TEST_F(HtmlReportTest, LinkUtilisationIsBytesOverIntervalOverBandwidth) {
  const Json l = Data()["links"];
  EXPECT_FALSE(l.contains("missing"));
  ASSERT_EQ(l["strategies"].size(), 1u);  // pp's usage is null
  EXPECT_EQ(l["strategies"][0]["links"][0]["util_percent"], Json::array({100.0, 50.0}));
}

TEST_F(HtmlReportTest, TimelineKeepsTheLastIterationOfTheChosenGpus) {
  ReportOptions o;
  o.gpus = {0};
  const Json t = Data(o)["timeline"];
  EXPECT_TRUE(Contains(t["missing"].get<std::string>(), "No trace for pp.trace.json"));
  ASSERT_EQ(t["strategies"].size(), 1u);
  const Json s = t["strategies"][0];
  EXPECT_EQ(s["iteration"], 1);
  EXPECT_EQ(s["rows"], Json::array({"GPU 0 · compute", "GPU 0 · comm"}));
  ASSERT_EQ(s["bars"].size(), 2u);
  EXPECT_EQ(s["bars"][1][3], "dp");                       // a communication's kind is its category
  EXPECT_DOUBLE_EQ(s["bars"][1][1].get<double>(), 0.05);  // ms after the first task
  EXPECT_DOUBLE_EQ(s["duration_s"].get<double>(), 80e-6);
}

TEST(TraceExcerptTest, DefaultGpusSpreadOverTheRanks) {
  EXPECT_EQ(DefaultTimelineGpus(64), (std::vector<int>{0, 1, 32, 63}));
  EXPECT_EQ(DefaultTimelineGpus(2), (std::vector<int>{0, 1}));
  EXPECT_EQ(DefaultTimelineGpus(1), (std::vector<int>{0}));
}

TEST_F(HtmlReportTest, TruncatedTimelineKeepsTheEarliestBars) {
  const TraceExcerpt x = ReadTraceExcerpt(dir_ + "/ddp.trace.json", {0, 1}, 2);
  EXPECT_TRUE(x.truncated);
  ASSERT_EQ(x.bars.size(), 2u);
  EXPECT_DOUBLE_EQ(x.end_s, 160e-6);  // GPU 1's bar at 110 us is kept, the 150 us one is not
}

// Back-to-back kernels of one stream become one bar rather than using up the bars: ten 10 us
// kernels 0.001 us apart (under a 2,000th of the 100 us window) are one bar; the one after a
// 5 us gap stays apart.
TEST_F(HtmlReportTest, BackToBackTasksOfAStreamAreOneBar) {
  std::string trace = R"({"traceEvents":[)";
  for (int i = 0; i < 10; ++i) {
    trace += R"({"name":"k)" + std::to_string(i) +
             R"(","cat":"compute","ph":"X","pid":0,"tid":0,"ts":)" + std::to_string(i * 10.001) +
             R"(,"dur":10.0,"args":{"iteration":0,"phase":"forward"}},)" + "\n";
  }
  trace +=
      R"({"name":"last","cat":"compute","ph":"X","pid":0,"tid":0,"ts":105.0,"dur":10.0,"args":{"iteration":0,"phase":"forward"}}],)";
  trace +=
      "\n"
      R"("displayTimeUnit":"ms"})"
      "\n";
  Write("many.trace.json", trace);
  const TraceExcerpt x = ReadTraceExcerpt(dir_ + "/many.trace.json", {0}, 5);
  EXPECT_FALSE(x.truncated);
  ASSERT_EQ(x.bars.size(), 2u);
  EXPECT_EQ(x.bars[0].name, "k0 and 9 more");
  EXPECT_NEAR(x.bars[0].end_s, 100.009e-6, 1e-12);
  EXPECT_EQ(x.bars[1].name, "last");
}

TEST_F(HtmlReportTest, MissingOptionalInputsSaySoAndHow) {
  fs::remove(dir_ + "/links.json");
  fs::remove(dir_ + "/ddp.trace.json");
  const Json d = Data();
  EXPECT_TRUE(Contains(d["links"]["missing"].get<std::string>(), "No links.json"));
  EXPECT_TRUE(Contains(d["timeline"]["missing"].get<std::string>(), "without --no-traces"));
  EXPECT_TRUE(Contains(d["timeline"]["missing"].get<std::string>(), "ddp.trace.json"));
  EXPECT_TRUE(d["validation"].is_null());
}

TEST_F(HtmlReportTest, ValidateFolderWithoutResults) {
  fs::remove(dir_ + "/results.json");
  Write("validation.json", R"({"format": "stratasim-validation", "version": 1, "strategies": [
    {"name": "ddp", "kinds": [{"kind": "gemm", "tasks": 3, "measured_s": 0.5, "simulated_s": 0.4}]}]})");
  const Json d = Data();
  EXPECT_TRUE(d["scenario"].is_null());
  EXPECT_EQ(d["validation"]["strategies"][0]["kinds"][0]["measured_s"], 0.5);
  fs::remove(dir_ + "/validation.json");
  EXPECT_TRUE(Contains(ErrorOf(), "no results.json (stratasim run) or validation.json"));
}

TEST_F(HtmlReportTest, BadInputNamesTheFileAndKey) {
  std::string bad = kResults;
  bad.replace(bad.find("\"iteration_time_s\": 2.0"), 23, "\"iteration_time_s\": \"2\"");
  Write("results.json", bad);
  EXPECT_TRUE(Contains(ErrorOf(), "/results.json: strategies[0].iteration_time_s: not a number"));
  Write("results.json", R"({"format": "stratasim-jobs"})");
  EXPECT_TRUE(Contains(ErrorOf(), "/results.json: format: expected \"stratasim-results\""));
  Write("results.json", "{not json");
  EXPECT_TRUE(Contains(ErrorOf(), "/results.json: not JSON"));
  Write("results.json", kResults);
  Write("links.json",
        R"({"format": "stratasim-links", "strategies": [{"name": "ddp", "usage": {}}]})");
  EXPECT_TRUE(Contains(ErrorOf(), "/links.json: strategies[0].usage: link usage: usage: missing"));
  Write("links.json", Links());
  Write("ddp.trace.json", "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":0, oops\n");
  ReportOptions o;
  o.gpus = {0};
  EXPECT_TRUE(Contains(ErrorOf(o), "/ddp.trace.json:1: not a trace event"));
  Write("ddp.trace.json",
        "{\"traceEvents\":[{\"name\":\"a\",\"ph\":\"X\",\"pid\":0,\"ts\":1,\"dur\":1,\"args\":{}}],"
        "\n");
  EXPECT_TRUE(
      Contains(ErrorOf(o), "/ddp.trace.json:1: trace event without an integer \"args.iteration\""));
}

TEST_F(HtmlReportTest, PageEmbedsDataChartJsAndEscapesScriptEnds) {
  const std::string data = ReportDataJson(dir_, {});
  const std::string page = HtmlReportPage(data, "a <b> & \"c\"");
  EXPECT_TRUE(Contains(page, "<title>a &lt;b&gt; &amp; &quot;c&quot;</title>"));
  EXPECT_TRUE(Contains(page, "Chart.js v3.9.1"));  // the library, its licence header kept
  EXPECT_TRUE(Contains(page, "Released under the MIT License"));
  EXPECT_TRUE(Contains(page, "<script type=\"application/json\" id=\"stratasim-data\">"));
  // The scenario's model holds "</script>": in the page it must not end the data's script.
  EXPECT_TRUE(Contains(page, "gpt \\u003c/script>"));
  EXPECT_EQ(page.find("gpt </script>"), std::string::npos);
  for (const char* section : {"sec-table", "sec-breakdown", "sec-memory", "sec-links",
                              "sec-timeline", "sec-moe", "sec-validation"}) {
    EXPECT_TRUE(Contains(page, std::string("id=\"") + section + "\""));
  }
  EXPECT_EQ(page.find("<!--STRATASIM_"), std::string::npos);  // every marker replaced
  EXPECT_EQ(page.find("http://"), std::string::npos);         // nothing fetched
  // The escaped data reads back as the same JSON.
  const size_t from = page.find("id=\"stratasim-data\">") + 20;
  const std::string embedded = page.substr(from, page.find("</script>", from) - from);
  EXPECT_EQ(Json::parse(embedded), Json::parse(data));
}

TEST_F(HtmlReportTest, SameInputsSameBytes) {
  const std::string file = dir_ + "/report.html";
  const size_t size = WriteHtmlReport(dir_, file, {});
  std::ifstream in(file, std::ios::binary);
  const std::string first((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(first.size(), size);
  WriteHtmlReport(dir_, file, {});
  std::ifstream again(file, std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>()),
            first);
}

TEST(EscapeJsonForScriptTest, OnlyAngleBracketsThatOpenSomething) {
  EXPECT_EQ(EscapeJsonForScript(R"({"a":"</x><!--y 1<2"})"), R"({"a":"\u003c/x>\u003c!--y 1<2"})");
}

}  // namespace
}  // namespace stratasim
