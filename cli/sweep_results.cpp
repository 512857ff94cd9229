#include "cli/sweep_results.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "report/csv_fields.h"

namespace stratasim {
namespace {

using Json = nlohmann::ordered_json;

Json Values(const SweepGrid& grid, std::uint64_t point) {
  Json v = Json::object();
  const std::vector<std::string> values = grid.Values(point);
  for (size_t k = 0; k < values.size(); ++k) v[grid.axes()[k].path] = values[k];
  return v;
}

Json Keys(const SweepGrid& grid) {
  Json keys = Json::array();
  for (const SweepAxis& a : grid.axes()) keys.push_back(a.path);
  return keys;
}

}  // namespace

std::string SweepHeaderLine(const SweepGrid& grid) {
  Json j;
  j["stratasim_sweep"] = 1;
  j["fingerprint"] = grid.fingerprint();
  j["points"] = grid.num_points();
  j["keys"] = Keys(grid);
  return j.dump();
}

std::string SweepPointLine(const SweepGrid& grid, std::uint64_t point,
                           const std::vector<StrategyResult>& strategies) {
  Json j;
  j["point"] = point;
  j["values"] = Values(grid, point);
  Json list = Json::array();
  for (const StrategyResult& r : strategies) {
    Json s;
    s["name"] = r.name;
    s["kind"] = r.kind;
    s["ok"] = r.ok;
    if (!r.ok) {
      s["error"] = r.error;
    } else {
      const Metrics& m = r.metrics;
      s["iteration_s"] = m.iteration_time_s;
      s["samples_per_s"] = m.samples_per_s;
      s["mfu"] = m.mfu;
      double peak = 0;
      for (double b : m.peak_memory_bytes) peak = std::max(peak, b);
      s["peak_memory_bytes"] = peak;
      s["exposed_comm_fraction"] = m.exposed_comm_fraction;
      Json by = Json::object();
      for (const auto& [category, fraction] : m.exposed_comm_by_category) by[category] = fraction;
      s["exposed_comm_by_category"] = by;
    }
    list.push_back(s);
  }
  j["strategies"] = list;
  return j.dump();
}

std::string SweepPointErrorLine(const SweepGrid& grid, std::uint64_t point,
                                const std::string& error) {
  Json j;
  j["point"] = point;
  j["values"] = Values(grid, point);
  j["error"] = error;
  return j.dump();
}

std::uint64_t SweepLinePoint(const std::string& line) {
  return Json::parse(line)["point"].get<std::uint64_t>();
}

bool SweepLineFailed(const std::string& line) {
  const Json j = Json::parse(line);
  if (j.contains("error")) return true;
  for (const Json& s : j["strategies"]) {
    if (!s["ok"].get<bool>()) return true;
  }
  return false;
}

std::string SweepResultsJson(const SweepGrid& grid,
                             const std::map<std::uint64_t, std::string>& lines,
                             const std::string& tool_version) {
  Json j;
  j["tool_version"] = tool_version;
  j["fingerprint"] = grid.fingerprint();
  j["keys"] = Keys(grid);
  Json points = Json::array();
  for (const auto& [point, line] : lines) points.push_back(Json::parse(line));
  j["points"] = points;
  return j.dump(2) + "\n";
}

std::string SweepResultsCsv(const SweepGrid& grid,
                            const std::map<std::uint64_t, std::string>& lines) {
  std::vector<Json> parsed;
  std::set<std::string> categories;
  for (const auto& [point, line] : lines) {
    parsed.push_back(Json::parse(line));
    if (!parsed.back().contains("strategies")) continue;
    for (const Json& s : parsed.back()["strategies"]) {
      if (!s.contains("exposed_comm_by_category")) continue;
      for (const auto& [c, v] : s["exposed_comm_by_category"].items()) categories.insert(c);
    }
  }
  std::string out = "point";
  for (const SweepAxis& a : grid.axes()) out += "," + CsvField(a.path);
  out +=
      ",strategy,kind,ok,error,iteration_s,samples_per_s,mfu,peak_memory_bytes,"
      "exposed_comm_fraction";
  for (const std::string& c : categories) out += "," + CsvField("exposed_" + c);
  out += "\n";
  for (const Json& p : parsed) {
    std::string prefix = std::to_string(p["point"].get<std::uint64_t>());
    for (const SweepAxis& a : grid.axes()) {
      prefix += "," + CsvField(p["values"][a.path].get<std::string>());
    }
    if (p.contains("error")) {
      out += prefix + ",,,false," + CsvField(p["error"].get<std::string>()) + ",,,,,";
      for (size_t i = 0; i < categories.size(); ++i) out += ",";
      out += "\n";
      continue;
    }
    for (const Json& s : p["strategies"]) {
      out += prefix + "," + CsvField(s["name"].get<std::string>()) + "," +
             CsvField(s["kind"].get<std::string>()) + ",";
      if (!s["ok"].get<bool>()) {
        out += "false," + CsvField(s["error"].get<std::string>()) + ",,,,,";
        for (size_t i = 0; i < categories.size(); ++i) out += ",";
        out += "\n";
        continue;
      }
      out += "true,," + CsvNumber(s["iteration_s"].get<double>()) + "," +
             CsvNumber(s["samples_per_s"].get<double>()) + "," + CsvNumber(s["mfu"].get<double>()) +
             "," + CsvBytes(s["peak_memory_bytes"].get<double>()) + "," +
             CsvNumber(s["exposed_comm_fraction"].get<double>());
      for (const std::string& c : categories) {
        const Json& by = s["exposed_comm_by_category"];
        out += "," + (by.contains(c) ? CsvNumber(by[c].get<double>()) : std::string("0"));
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace stratasim
