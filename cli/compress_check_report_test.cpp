#include "cli/compress_check_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/compress_check.h"
#include "cli/gradient_tensors.h"

namespace stratasim {
namespace {

CompressorToCheck Dense() {
  CompressorToCheck c;
  c.name = "dense";
  c.spec.method = CompressionMethod::kDense;
  return c;
}

// A spec every implementation refuses (core/compression.h's bounds), whether built or not.
CompressorToCheck Refused() {
  CompressorToCheck c;
  c.name = "casq-q0";
  c.strategy = "casq-q0";
  c.spec.method = CompressionMethod::kCasq;
  c.spec.casq_bits = 0;
  return c;
}

CompressCheckReport Report() {
  const kernels::WorkerGradients g =
      EmbeddingGradients(TokenDistribution(500, 1.0), 8, 300, 4, 2, 1.0);
  const ExactSum exact = ExactSumOf(g);
  CompressCheckReport r;
  r.scenario = "tiny";
  r.scenario_file = "tiny.yaml";
  r.seed = 2;
  r.trials = 3;
  r.source = "embedding";
  r.description = "embedding gradient 500 x 8";
  r.numbers = {{"scale", 1.0}};
  r.texts = {{"token_distribution", "zipf"}};
  r.shape = g.shape;
  r.workers = 4;
  r.rows = CountRows(g);
  r.exact_norm = exact.norm;
  r.compressors.push_back(CheckCompressor(Dense(), g, exact, 3));
  r.compressors.push_back(CheckCompressor(Refused(), g, exact, 3));
  return r;
}

TEST(CompressCheck, DenseIsExactAndSendsTheWholeGradient) {
  const CompressCheckReport r = Report();
  const CompressorCheck& d = r.compressors[0];
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_LT(d.relative_error, 1e-6);  // the FP32 sum against the exact one
  EXPECT_LT(d.bias, 1e-6);
  EXPECT_EQ(d.recovered_row_fraction, 1.0);
  EXPECT_EQ(d.false_rows, 0);
  EXPECT_EQ(d.decoded_rows, static_cast<double>(r.rows.union_rows));
  EXPECT_EQ(d.bytes_per_worker, 500 * 8 * 4);
  EXPECT_EQ(d.ratio_to_dense, 1.0);
  EXPECT_GE(d.encode_s, 0);
  EXPECT_GT(d.decode_s, 0);
  EXPECT_DOUBLE_EQ(d.decode_s_per_element, d.decode_s / 4000);
}

TEST(CompressCheck, ACompressorThatThrowsIsReportedNotFatal) {
  const CompressorCheck& c = Report().compressors[1];
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.error, "compressor casq: casq_bits must be in [1, 8]");
}

TEST(CompressCheck, RowCounts) {
  kernels::WorkerGradients g;
  g.shape = {4, 1};
  g.workers = {{1, 0, 0, 0}, {0, 0, 2, 3}};
  const RowCounts rc = CountRows(g);
  EXPECT_EQ(rc.per_worker, (std::vector<long long>{1, 2}));
  EXPECT_EQ(rc.union_rows, 3);
}

TEST(CompressCheckReport, JsonKeepsTheMeasuredTimesApart) {
  const CompressCheckReport r = Report();
  const nlohmann::json j = nlohmann::json::parse(CompressCheckToJson(r));
  EXPECT_EQ(j["format"], "stratasim-compress-check");
  EXPECT_EQ(j["tensor"]["rows"], 500);
  EXPECT_EQ(j["tensor"]["workers"], 4);
  EXPECT_EQ(j["tensor"]["union_rows"], r.rows.union_rows);
  const nlohmann::json& d = j["compressors"][0];
  EXPECT_EQ(d["method"], "dense");
  EXPECT_EQ(d["ok"], true);
  EXPECT_EQ(d["bytes_per_worker"], 16000.0);
  EXPECT_EQ(d["payloads"][0]["kind"], "all_reduce");
  EXPECT_TRUE(d["measured"].contains("encode_s_per_element"));
  EXPECT_FALSE(d.contains("encode_s"));  // only under "measured"
  const nlohmann::json& bad = j["compressors"][1];
  EXPECT_EQ(bad["ok"], false);
  EXPECT_EQ(bad["error"], "compressor casq: casq_bits must be in [1, 8]");
  EXPECT_EQ(bad["options"]["casq_bits"], 0);
  EXPECT_FALSE(bad.contains("measured"));
}

TEST(CompressCheckReport, CsvTableAndCalibration) {
  const CompressCheckReport r = Report();
  const std::string csv = CompressCheckToCsv(r);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "name,method,strategy,ok,relative_error,relative_error_max,bias,decoded_rows,"
            "recovered_row_fraction,false_rows,bytes_per_worker,bytes_total,ratio_to_dense,error,"
            "measured_encode_s,measured_decode_s");
  EXPECT_NE(csv.find("\ndense,dense,,true,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",16000,16000,1,,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\ncasq-q0,casq,casq-q0,false,,,,,,,,,,\"compressor casq: casq_bits must be "
                     "in [1, 8]\",,\n"),
            std::string::npos)
      << csv;
  const std::string table = FormatCompressCheckTable(r);
  EXPECT_NE(table.find("compress-check tiny: embedding gradient 500 x 8; 4 workers, 3 trials, "
                       "seed 2\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("casq-q0: failed: compressor casq: casq_bits must be in [1, 8]\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("15.62 KiB"), std::string::npos) << table;
  EXPECT_FALSE(r.AllOk());
  const Calibration cal = CompressionCalibrationOf(r, "H100-SXM5", "test");
  ASSERT_EQ(cal.gpus.size(), 1u);
  EXPECT_EQ(cal.gpus[0].gpu, "H100-SXM5");
  ASSERT_EQ(cal.gpus[0].compression.size(), 1u);  // the failed one has no times
  EXPECT_EQ(cal.gpus[0].compression.at(CompressionMethod::kDense).decode_s_per_element,
            r.compressors[0].decode_s_per_element);
}

}  // namespace
}  // namespace stratasim
