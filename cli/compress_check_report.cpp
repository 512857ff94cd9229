#include "cli/compress_check_report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/units.h"
#include "report/aligned_columns.h"
#include "report/csv_fields.h"

namespace stratasim {
namespace {

// Insertion order is the documented order (docs/compress-check.md).
using Json = nlohmann::ordered_json;

constexpr int kFormatVersion = 1;

std::string Fixed(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// The method's own parameters as they sized this run (core/compression.h).
Json SpecToJson(const CompressionSpec& s, const GradientShape& shape) {
  Json j;
  switch (s.method) {
    case CompressionMethod::kS2Reducer:
      j["sketch_rows"] = s.sketch_rows;
      j["sketch_columns"] = SketchColumns(s, shape);
      break;
    case CompressionMethod::kCasq:
      j["casq_bits"] = s.casq_bits;
      j["table_buckets"] = CasqTableBuckets(s, shape.Elements());
      break;
    case CompressionMethod::kTopK:
      j["topk_fraction"] = s.topk_fraction;
      j["k"] = TopKElements(s, shape.Elements());
      j["index_bytes"] = s.index_bytes;
      break;
    case CompressionMethod::kCoo:
      j["index_bytes"] = s.index_bytes;
      break;
    case CompressionMethod::kQsgd:
      j["qsgd_levels"] = s.qsgd_levels;
      j["bucket_elements"] = s.bucket_elements;
      break;
    case CompressionMethod::kTernGrad:
      j["bucket_elements"] = s.bucket_elements;
      break;
    case CompressionMethod::kInt8:
      j["int8_block"] = s.int8_block;
      break;
    default:
      break;
  }
  j["seed"] = s.seed;
  return j;
}

Json CompressorToJson(const CompressorCheck& c, const GradientShape& shape) {
  Json j;
  j["name"] = c.what.name;
  j["method"] = std::string(ToString(c.what.spec.method));
  j["strategy"] = c.what.strategy;
  j["options"] = SpecToJson(c.what.spec, shape);
  j["ok"] = c.ok;
  j["error"] = c.ok ? Json(nullptr) : Json(c.error);
  if (!c.ok) return j;
  j["relative_error"] = c.relative_error;
  j["relative_error_max"] = c.relative_error_max;
  j["bias"] = c.bias;
  j["decoded_rows"] = c.decoded_rows;
  j["recovered_row_fraction"] = c.recovered_row_fraction;
  j["false_rows"] = c.false_rows;
  Json payloads = Json::array();
  for (const WirePayload& p : c.payloads) {
    payloads.push_back({{"kind", std::string(ToString(p.kind))},
                        {"what", p.what},
                        {"bytes", p.bytes},
                        {"bytes_per_worker", p.bytes_per_worker}});
  }
  j["payloads"] = payloads;
  j["bytes_per_worker"] = c.bytes_per_worker;
  j["bytes_total"] = c.bytes_total;
  j["ratio_to_dense"] = c.ratio_to_dense;
  j["measured"] = {{"encode_s", c.encode_s},
                   {"decode_s", c.decode_s},
                   {"encode_s_per_element", c.encode_s_per_element},
                   {"decode_s_per_element", c.decode_s_per_element}};
  return j;
}

}  // namespace

bool CompressCheckReport::AllOk() const {
  for (const CompressorCheck& c : compressors) {
    if (!c.ok) return false;
  }
  return true;
}

std::string FormatCompressCheckTable(const CompressCheckReport& r) {
  std::string out = "compress-check " + r.scenario + ": " + r.description + "; " +
                    std::to_string(r.workers) + " workers, " + std::to_string(r.trials) +
                    " trials, seed " + std::to_string(r.seed) + "\n";
  out += "non-zero rows: " + std::to_string(r.rows.union_rows) + " of " +
         std::to_string(r.shape.rows) + " in the union; per worker";
  for (long long n : r.rows.per_worker) out += " " + std::to_string(n);
  out += "\n\n";
  std::vector<std::vector<std::string>> rows = {{"name", "method", "rel. error", "bias",
                                                 "rows found", "false rows", "bytes/worker",
                                                 "total", "vs dense", "encode*", "decode*"}};
  for (const CompressorCheck& c : r.compressors) {
    const std::string method(ToString(c.what.spec.method));
    if (!c.ok) {
      rows.push_back({c.what.name, method, "failed", "", "", "", "", "", "", "", ""});
      continue;
    }
    rows.push_back({c.what.name, method, Fixed("%.3g", c.relative_error), Fixed("%.3g", c.bias),
                    Fixed("%.1f%%", 100 * c.recovered_row_fraction), Fixed("%.1f", c.false_rows),
                    FormatBytes(c.bytes_per_worker), FormatBytes(c.bytes_total),
                    Fixed("%.4f", c.ratio_to_dense), FormatSeconds(c.encode_s),
                    FormatSeconds(c.decode_s)});
  }
  out += AlignedColumns(rows, 2);
  for (const CompressorCheck& c : r.compressors) {
    if (!c.ok) out += c.what.name + ": failed: " + c.error + "\n";
  }
  out +=
      "* measured wall time on this CPU (all workers' encodes; the merge and decode), median of " +
      std::to_string(r.trials) +
      " trials: it varies run to run, so the files keep it apart (\"measured\")\n";
  return out;
}

std::string CompressCheckToJson(const CompressCheckReport& r) {
  Json j;
  j["format"] = "stratasim-compress-check";
  j["version"] = kFormatVersion;
  j["scenario"] = r.scenario;
  j["scenario_file"] = r.scenario_file;
  j["seed"] = r.seed;
  j["trials"] = r.trials;
  Json t;
  t["source"] = r.source;
  t["description"] = r.description;
  for (const auto& [k, v] : r.texts) t[k] = v;
  for (const auto& [k, v] : r.numbers) t[k] = v;
  t["rows"] = r.shape.rows;
  t["cols"] = r.shape.cols;
  t["workers"] = r.workers;
  t["nonzero_rows_per_worker"] = r.rows.per_worker;
  t["union_rows"] = r.rows.union_rows;
  t["exact_sum_norm"] = r.exact_norm;
  j["tensor"] = t;
  Json cs = Json::array();
  for (const CompressorCheck& c : r.compressors) cs.push_back(CompressorToJson(c, r.shape));
  j["compressors"] = cs;
  return j.dump(2) + "\n";
}

std::string CompressCheckToCsv(const CompressCheckReport& r) {
  std::string out =
      "name,method,strategy,ok,relative_error,relative_error_max,bias,decoded_rows,"
      "recovered_row_fraction,false_rows,bytes_per_worker,bytes_total,ratio_to_dense,error,"
      "measured_encode_s,measured_decode_s\n";
  for (const CompressorCheck& c : r.compressors) {
    auto figure = [&](double v) { return c.ok ? CsvNumber(v) : std::string(); };
    auto bytes = [&](double v) { return c.ok ? CsvBytes(v) : std::string(); };
    out += CsvField(c.what.name) + "," + std::string(ToString(c.what.spec.method)) + "," +
           CsvField(c.what.strategy) + "," + (c.ok ? "true" : "false") + "," +
           figure(c.relative_error) + "," + figure(c.relative_error_max) + "," + figure(c.bias) +
           "," + figure(c.decoded_rows) + "," + figure(c.recovered_row_fraction) + "," +
           figure(c.false_rows) + "," + bytes(c.bytes_per_worker) + "," + bytes(c.bytes_total) +
           "," + figure(c.ratio_to_dense) + "," + (c.ok ? std::string() : CsvField(c.error)) + "," +
           figure(c.encode_s) + "," + figure(c.decode_s) + "\n";
  }
  return out;
}

Calibration CompressionCalibrationOf(const CompressCheckReport& r, const std::string& gpu,
                                     const std::string& source) {
  Calibration cal;
  cal.source = source;
  GpuCalibration g;
  g.gpu = gpu;
  for (const CompressorCheck& c : r.compressors) {
    if (!c.ok || g.compression.count(c.what.spec.method) > 0) continue;
    g.compression[c.what.spec.method] = {c.encode_s_per_element, c.decode_s_per_element};
  }
  cal.gpus.push_back(g);
  return cal;
}

}  // namespace stratasim
