// Gathering an outputs folder into the HTML report's data (report_inputs.h).
#include "report/report_inputs.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/input_file.h"
#include "core/link_usage.h"
#include "report/trace_excerpt.h"

namespace stratasim {
namespace {

using Json = nlohmann::ordered_json;

// results.json, links.json and validation.json of the largest runs stay far below this; a file
// over it is not one stratasim wrote.
constexpr size_t kMaxInputBytes = size_t{1} << 30;

// A JSON file of the folder, with the path its errors name.
struct Input {
  std::string path;
  Json json;
};

bool Exists(const std::string& path) { return std::filesystem::is_regular_file(path); }

Input ReadJson(const std::string& path, const std::string& format) {
  Input in{path, Json()};
  const std::string text = ReadInputFile(path, kMaxInputBytes, "a " + format + " file");
  try {
    in.json = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not JSON: " + e.what());
  }
  if (!in.json.is_object() || !in.json.contains("format") || in.json["format"] != format) {
    throw Error(path + ": format: expected \"" + format + "\"");
  }
  return in;
}

[[noreturn]] void Bad(const std::string& path, const std::string& key, const std::string& rule) {
  throw Error(path + ": " + key + ": " + rule);
}

const Json& Key(const Json& j, const std::string& key, const std::string& path,
                const std::string& where) {
  if (!j.is_object() || !j.contains(key)) Bad(path, where + key, "missing");
  return j.at(key);
}

// A number, or null (a failed strategy's figures); anything else is an error.
Json NumberOrNull(const Json& j, const std::string& key, const std::string& path,
                  const std::string& where) {
  const Json& v = Key(j, key, path, where);
  if (!v.is_null() && !v.is_number()) Bad(path, where + key, "not a number");
  return v;
}

double NumberOr(const Json& j, const std::string& key, double fallback) {
  return j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : fallback;
}

std::vector<double> Numbers(const Json& j, const std::string& key, const std::string& path,
                            const std::string& where) {
  const Json& v = Key(j, key, path, where);
  if (!v.is_array()) Bad(path, where + key, "not an array");
  std::vector<double> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number()) Bad(path, where + key + "[" + std::to_string(i) + "]", "not a number");
    out.push_back(v[i].get<double>());
  }
  return out;
}

std::string Text(const Json& j, const std::string& key, const std::string& path,
                 const std::string& where) {
  const Json& v = Key(j, key, path, where);
  if (!v.is_string()) Bad(path, where + key, "not a string");
  return v.get<std::string>();
}

// Seconds of the iteration: compute (the remainder), exposed communication per kind, idle.
// The kinds' fractions can overlap (docs/report-formats.md: exposed time of two kinds at once
// counts in both), so they are scaled to add up to exposed_comm_fraction.
Json Breakdown(const Json& s, const std::string& path, const std::string& where) {
  const double t = s["iteration_time_s"].get<double>();
  const double exposed = NumberOr(s, "exposed_comm_fraction", 0);
  const double idle = NumberOr(s, "idle_fraction", 0);
  const Json& by = Key(s, "exposed_comm_by_category", path, where);
  if (!by.is_object()) Bad(path, where + "exposed_comm_by_category", "not an object");
  double sum = 0;
  for (const auto& [kind, v] : by.items()) {
    if (!v.is_number()) Bad(path, where + "exposed_comm_by_category." + kind, "not a number");
    sum += v.get<double>();
  }
  Json comm = Json::object();
  for (const auto& [kind, v] : by.items()) {
    comm[kind] = sum > 0 ? v.get<double>() / sum * exposed * t : 0.0;
  }
  Json b;
  b["compute_s"] = std::max(0.0, 1 - exposed - idle) * t;
  b["exposed_comm_s"] = std::move(comm);
  b["idle_s"] = idle * t;
  return b;
}

// Peak memory per stage (pipelined plans) or per rank, grouped past max_bars ranks, beside the
// capacity of the GPUs (gpu_memory_capacity_bytes, per rank, when the file has it).
Json Memory(const Json& s, const std::string& path, const std::string& where, int max_bars) {
  const std::vector<double> ranks = Numbers(s, "peak_memory_bytes", path, where);
  const std::vector<double> stages = Numbers(s, "peak_memory_per_stage_bytes", path, where);
  std::vector<double> capacity;
  if (s.contains("gpu_memory_capacity_bytes")) {
    capacity = Numbers(s, "gpu_memory_capacity_bytes", path, where);
  }
  auto min_capacity = [&](size_t from, size_t to) -> Json {
    if (capacity.size() < to || from >= to) return nullptr;
    return *std::min_element(capacity.begin() + static_cast<long>(from),
                             capacity.begin() + static_cast<long>(to));
  };
  Json m;
  Json labels = Json::array(), peak = Json::array(), cap = Json::array();
  if (!stages.empty()) {
    m["per"] = "stage";
    for (size_t i = 0; i < stages.size(); ++i) {
      labels.push_back("stage " + std::to_string(i));
      peak.push_back(stages[i]);
      cap.push_back(min_capacity(0, ranks.size()));  // a stage's ranks are not in the file
    }
  } else {
    const size_t n = ranks.size();
    const size_t group = std::max<size_t>(
        1, (n + static_cast<size_t>(max_bars) - 1) / static_cast<size_t>(max_bars));
    m["per"] = group == 1 ? "rank" : "ranks";
    for (size_t from = 0; from < n; from += group) {
      const size_t to = std::min(n, from + group);
      labels.push_back(group == 1 ? "GPU " + std::to_string(from)
                                  : "GPUs " + std::to_string(from) + "–" + std::to_string(to - 1));
      peak.push_back(*std::max_element(ranks.begin() + static_cast<long>(from),
                                       ranks.begin() + static_cast<long>(to)));
      cap.push_back(min_capacity(from, to));
    }
  }
  m["labels"] = std::move(labels);
  m["peak_bytes"] = std::move(peak);
  m["capacity_bytes"] = std::move(cap);
  return m;
}

Json Moe(const Json& moe, const std::string& path, const std::string& where) {
  Json m;
  const Json& it = Key(moe, "iteration_time_s", path, where);
  m["iteration_s"] = Numbers(it, "each", path, where + "iteration_time_s.");
  if (moe.contains("gpu_tokens_per_iteration")) {
    const Json& g = moe.at("gpu_tokens_per_iteration");
    const std::string key = where + "gpu_tokens_per_iteration";
    if (!g.is_array()) Bad(path, key, "not an array");
    for (size_t i = 0; i < g.size(); ++i) {
      if (!g[i].is_array()) Bad(path, key + "[" + std::to_string(i) + "]", "not an array");
      for (const Json& x : g[i]) {
        if (!x.is_number()) Bad(path, key + "[" + std::to_string(i) + "]", "not a number");
      }
    }
    m["gpu_tokens_per_iteration"] = g;
  }
  return m;
}

Json Strategies(const Input& results, const ReportOptions& o) {
  const std::string& path = results.path;
  const Json& list = Key(results.json, "strategies", path, "");
  if (!list.is_array()) Bad(path, "strategies", "not an array");
  Json out = Json::array();
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& s = list[i];
    const std::string where = "strategies[" + std::to_string(i) + "].";
    Json r;
    r["name"] = Text(s, "name", path, where);
    r["kind"] = Text(s, "kind", path, where);
    const Json& ok = Key(s, "ok", path, where);
    if (!ok.is_boolean()) Bad(path, where + "ok", "not a boolean");
    r["ok"] = ok;
    if (!ok.get<bool>()) {
      r["error"] = s.contains("error") && s["error"].is_string() ? s["error"] : Json("");
      out.push_back(std::move(r));
      continue;
    }
    const Json& gpus = Key(s, "num_gpus", path, where);
    if (!gpus.is_number_integer()) Bad(path, where + "num_gpus", "not an integer");
    r["num_gpus"] = gpus;
    for (const char* key : {"iteration_time_s", "samples_per_s", "tokens_per_s", "mfu",
                            "exposed_comm_fraction", "idle_fraction", "max_peak_memory_bytes"}) {
      r[key] = NumberOrNull(s, key, path, where);
    }
    if (!r["iteration_time_s"].is_number()) Bad(path, where + "iteration_time_s", "not a number");
    const Json& oom = Key(s, "oom_ranks", path, where);
    if (!oom.is_array()) Bad(path, where + "oom_ranks", "not an array");
    r["oom_ranks"] = oom.size();
    r["breakdown"] = Breakdown(s, path, where);
    r["memory"] = Memory(s, path, where, o.max_memory_bars);
    if (s.contains("moe") && s["moe"].is_object()) r["moe"] = Moe(s["moe"], path, where + "moe.");
    out.push_back(std::move(r));
  }
  return out;
}

Json Links(const std::string& dir, const Json& strategies, const ReportOptions& o) {
  const std::string path = dir + "/links.json";
  Json j;
  if (!Exists(path)) {
    j["missing"] =
        "No links.json in this folder: it is written by `stratasim run` (since link usage was "
        "recorded); run the scenario again to get per-link utilisation.";
    return j;
  }
  const Input links = ReadJson(path, "stratasim-links");
  const Json& list = Key(links.json, "strategies", path, "");
  if (!list.is_array()) Bad(path, "strategies", "not an array");
  Json out = Json::array();
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = "strategies[" + std::to_string(i) + "].";
    const std::string name = Text(list[i], "name", path, where);
    const Json& usage = Key(list[i], "usage", path, where);
    if (usage.is_null()) continue;  // a failed strategy
    LinkUsage u;
    try {
      u = LinkUsageFromJson(usage.dump());
    } catch (const Error& e) {
      throw Error(path + ": " + where + "usage: " + e.what());
    }
    Json s;
    s["name"] = name;
    s["edges_s"] = u.edges_s;
    s["links_used"] = u.links_used;
    Json series = Json::array();
    for (size_t l = 0; l < u.links.size() && static_cast<int>(l) < o.busiest_links; ++l) {
      const LinkSeries& ls = u.links[l];
      if (ls.bytes_per_interval.size() + 1 != u.edges_s.size()) {
        Bad(path, where + "usage.links[" + std::to_string(l) + "].bytes_per_interval",
            "one entry per interval of edges_s expected");
      }
      Json x;
      x["name"] = ls.name;
      x["label"] = ls.label;
      x["bandwidth_Bps"] = ls.bandwidth_Bps;
      x["bytes"] = ls.bytes;
      Json util = Json::array();
      for (size_t k = 0; k < ls.bytes_per_interval.size(); ++k) {
        const double dt = u.edges_s[k + 1] - u.edges_s[k];
        util.push_back(dt > 0 && ls.bandwidth_Bps > 0
                           ? ls.bytes_per_interval[k] / dt / ls.bandwidth_Bps * 100
                           : 0.0);
      }
      x["util_percent"] = std::move(util);
      series.push_back(std::move(x));
    }
    s["links"] = std::move(series);
    out.push_back(std::move(s));
  }
  (void)strategies;
  j["strategies"] = std::move(out);
  if (j["strategies"].empty()) {
    j["missing"] = path +
                   " holds no recorded usage (every strategy failed, or none moved bytes "
                   "over links: analytic collectives load no link).";
  }
  return j;
}

Json Timeline(const std::string& dir, const Json& strategies, const ReportOptions& o) {
  Json j;
  int most_gpus = 0;
  for (const Json& s : strategies) {
    if (s["ok"].get<bool>()) most_gpus = std::max(most_gpus, s["num_gpus"].get<int>());
  }
  const std::vector<int> gpus = o.gpus.empty() ? DefaultTimelineGpus(most_gpus) : o.gpus;
  j["gpus"] = gpus;
  Json out = Json::array();
  std::vector<std::string> absent;
  for (const Json& s : strategies) {
    if (!s["ok"].get<bool>()) continue;
    const std::string name = s["name"].get<std::string>();
    const std::string path = dir + "/" + name + ".trace.json";
    if (!Exists(path)) {
      absent.push_back(name + ".trace.json");
      continue;
    }
    const TraceExcerpt x = ReadTraceExcerpt(path, gpus, o.max_bars);
    Json t;
    t["name"] = name;
    t["iteration"] = x.iteration;
    t["duration_s"] = x.end_s - x.start_s;
    t["truncated"] = x.truncated;
    t["rows"] = x.rows;
    Json bars = Json::array();
    for (const TraceBar& b : x.bars) {
      bars.push_back(Json::array({b.row, b.start_s * 1e3, b.end_s * 1e3, b.kind, b.name}));
    }
    t["bars"] = std::move(bars);
    out.push_back(std::move(t));
  }
  j["strategies"] = std::move(out);
  if (!absent.empty()) {
    std::string list;
    for (const std::string& a : absent) list += (list.empty() ? "" : ", ") + a;
    j["missing"] = "No trace for " + list +
                   " in this folder: run the scenario without --no-traces to get the timeline.";
  }
  return j;
}

Json Validation(const std::string& dir) {
  const std::string path = dir + "/validation.json";
  if (!Exists(path)) return nullptr;
  const Input v = ReadJson(path, "stratasim-validation");
  const Json& list = Key(v.json, "strategies", path, "");
  if (!list.is_array()) Bad(path, "strategies", "not an array");
  Json out = Json::array();
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = "strategies[" + std::to_string(i) + "].";
    Json s;
    s["name"] = Text(list[i], "name", path, where);
    Json kinds = Json::array();
    if (list[i].contains("kinds")) {
      const Json& k = list[i]["kinds"];
      if (!k.is_array()) Bad(path, where + "kinds", "not an array");
      for (size_t n = 0; n < k.size(); ++n) {
        const std::string w = where + "kinds[" + std::to_string(n) + "].";
        Json e;
        e["kind"] = Text(k[n], "kind", path, w);
        e["measured_s"] = NumberOrNull(k[n], "measured_s", path, w);
        e["simulated_s"] = NumberOrNull(k[n], "simulated_s", path, w);
        kinds.push_back(std::move(e));
      }
    }
    s["kinds"] = std::move(kinds);
    if (list[i].contains("iteration")) s["iteration"] = list[i]["iteration"];
    out.push_back(std::move(s));
  }
  Json j;
  j["backend"] = v.json.contains("backend") ? v.json["backend"] : Json("");
  j["strategies"] = std::move(out);
  return j;
}

}  // namespace

std::string ReportDataJson(const std::string& dir, const ReportOptions& options) {
  const std::string results_path = dir + "/results.json";
  const bool has_results = Exists(results_path);
  Json validation = Validation(dir);
  if (!has_results && validation.is_null()) {
    throw Error(dir +
                ": no results.json (stratasim run) or validation.json (stratasim "
                "validate) in this folder");
  }
  Json data;
  if (has_results) {
    const Input results = ReadJson(results_path, "stratasim-results");
    const Json& sc = Key(results.json, "scenario", results_path, "");
    Json scenario;
    for (const char* key : {"name", "file", "gpus", "model"}) {
      scenario[key] = Text(sc, key, results_path, "scenario.");
    }
    data["scenario"] = std::move(scenario);
    data["tool_version"] = Text(results.json, "tool_version", results_path, "");
    data["strategies"] = Strategies(results, options);
    data["links"] = Links(dir, data["strategies"], options);
    data["timeline"] = Timeline(dir, data["strategies"], options);
  } else {
    data["scenario"] = nullptr;
    data["strategies"] = Json::array();
    data["missing"] =
        "No results.json in this folder: a validate run has only the comparison "
        "with measurements; `stratasim run` writes the other sections.";
  }
  data["validation"] = std::move(validation);
  return data.dump();
}

}  // namespace stratasim
