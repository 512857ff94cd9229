#include "report/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/yaml_flatten.h"
#include "report/aligned_columns.h"

namespace stratasim {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kResultsVersion = 1;

// Which way a figure is better; `points`: a fraction of the iteration, judged in percentage
// points (a share that goes from 0 to 1% has no meaningful relative change).
struct FigureSpec {
  const char* name;
  bool lower_is_better;
  bool points;
};

// Report order. exposed_comm_by_category is expanded into its categories.
const std::vector<FigureSpec>& Specs() {
  static const std::vector<FigureSpec> specs = {
      {"iteration_time_s", true, false},
      {"samples_per_s", false, false},
      {"tokens_per_s", false, false},
      {"mfu", false, false},
      {"exposed_comm_fraction", true, true},
      {"exposed_comm_by_category", true, true},
      {"idle_fraction", true, true},
      {"max_peak_memory_bytes", true, false},
      {"moe.iteration_time_s.p95", true, false},
      {"moe.tokens_per_s", false, false},
      {"moe.load_balance_ratio", false, false},
      {"moe.exposed_a2a_s", true, false},
      {"pipeline.bubble_fraction", true, true},
      {"pipeline.startup_s", true, false},
      {"pipeline.max_stage_compute_s", true, false},
  };
  return specs;
}

constexpr const char* kByCategory = "exposed_comm_by_category";

[[noreturn]] void Bad(const std::string& path, const std::string& key, const std::string& value,
                      const std::string& rule) {
  throw ConfigError(SourceLocation{path, 0, 0}, key, value, rule);
}

// Parses and checks the parts compare reads.
Json ParseResults(const std::string& path, const std::string& text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    Bad(path, "", "", std::string("not JSON: ") + e.what());
  }
  if (!j.is_object()) Bad(path, "", "", "must be a JSON object (a results.json of stratasim run)");
  if (!j.contains("format")) {
    Bad(path, "format", "", "missing: not a results.json of stratasim run");
  }
  const Json& format = j["format"];
  if (!format.is_string() || format.get<std::string>() != "stratasim-results") {
    Bad(path, "format", format.is_string() ? format.get<std::string>() : format.dump(),
        "must be \"stratasim-results\" (a results.json of stratasim run)");
  }
  const Json& version = j.contains("version") ? j["version"] : Json();
  if (!version.is_number_integer() || version.get<long long>() != kResultsVersion) {
    Bad(path, "version", version.dump(),
        "this stratasim reads version " + std::to_string(kResultsVersion));
  }
  if (!j.contains("scenario") || !j["scenario"].is_object()) {
    Bad(path, "scenario", "", "must be an object");
  }
  if (!j.contains("strategies") || !j["strategies"].is_array()) {
    Bad(path, "strategies", "", "must be an array");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < j["strategies"].size(); ++i) {
    const Json& s = j["strategies"][i];
    const std::string key = "strategies[" + std::to_string(i) + "]";
    if (!s.is_object() || !s.contains("name") || !s["name"].is_string()) {
      Bad(path, key + ".name", "", "must be a string");
    }
    if (!s.contains("ok") || !s["ok"].is_boolean()) Bad(path, key + ".ok", "", "must be a bool");
    if (!names.insert(s["name"].get<std::string>()).second) {
      Bad(path, key + ".name", s["name"].get<std::string>(), "names two strategies");
    }
  }
  return j;
}

std::string Cell(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  return v.dump();
}

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The figure at `path` ("moe.tokens_per_s") of strategy `s`: nullopt when absent or null (a
// NaN or infinity was written as null). A value of another type is an error naming the key.
std::optional<double> FigureAt(const std::string& file, size_t index, const Json& s,
                               const std::vector<std::string>& path) {
  const Json* v = &s;
  std::string key = "strategies[" + std::to_string(index) + "]";
  for (const std::string& part : path) {
    if (!v->is_object() || !v->contains(part)) return std::nullopt;
    v = &(*v)[part];
    key += "." + part;
  }
  if (v->is_null()) return std::nullopt;
  if (!v->is_number()) Bad(file, key, v->dump(), "must be a number");
  return v->get<double>();
}

std::vector<std::string> Split(const std::string& name) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = name.find('.', start)) != std::string::npos; start = dot + 1) {
    parts.push_back(name.substr(start, dot - start));
  }
  parts.push_back(name.substr(start));
  return parts;
}

struct Row {
  std::string name;
  std::optional<double> a, b;
  bool points = false;
  std::string verdict;  // "REGRESSED", "improved" or ""
  double bad = 0;       // the move in the bad direction, in % or points
};

bool Wanted(const CompareOptions& o, const std::string& name, const std::string& family) {
  if (o.metrics.empty()) return true;
  for (const std::string& m : o.metrics) {
    if (m == name || m == family) return true;
  }
  return false;
}

Row Judge(const std::string& name, std::optional<double> a, std::optional<double> b,
          const FigureSpec& spec, double threshold) {
  Row r;
  r.name = name;
  r.a = a;
  r.b = b;
  r.points = spec.points;
  if (!a || !b) return r;
  const double worse = spec.lower_is_better ? *b - *a : *a - *b;
  if (spec.points) {
    r.bad = worse * 100;
  } else if (*a != 0) {
    r.bad = worse / std::fabs(*a) * 100;
  } else {
    r.bad = worse > 0 ? INFINITY : worse < 0 ? -INFINITY : 0;
  }
  if (r.bad > threshold) {
    r.verdict = "REGRESSED";
  } else if (-r.bad > threshold) {
    r.verdict = "improved";
  }
  return r;
}

std::string Relative(const Row& r) {
  if (!r.a || !r.b) return "-";
  if (*r.a == 0) return *r.b == 0 ? "+0.00%" : "n/a";
  return Fmt("%+.2f%%", (*r.b - *r.a) / std::fabs(*r.a) * 100);
}

std::string Value(const std::optional<double>& v) { return v ? Fmt("%.6g", *v) : "-"; }

// How far a regression went, for the verdict line.
std::string Moved(const Row& r) {
  if (r.points) return Fmt("%+.2f points", (*r.b - *r.a) * 100);
  return Relative(r);
}

Json JsonNumber(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? Json(*v) : Json(nullptr);
}

struct Strategy {
  size_t index;
  const Json* json;
};

std::map<std::string, Strategy> ByName(const Json& r) {
  std::map<std::string, Strategy> out;
  for (size_t i = 0; i < r["strategies"].size(); ++i) {
    const Json& s = r["strategies"][i];
    out[s["name"].get<std::string>()] = {i, &s};
  }
  return out;
}

std::vector<std::string> Categories(const Json& a, const Json& b) {
  std::set<std::string> cats;
  for (const Json* s : {&a, &b}) {
    if (s->contains(kByCategory) && (*s)[kByCategory].is_object()) {
      for (const auto& kv : (*s)[kByCategory].items()) cats.insert(kv.key());
    }
  }
  return {cats.begin(), cats.end()};
}

}  // namespace

const std::vector<std::string>& CompareFigureNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const FigureSpec& s : Specs()) n.push_back(s.name);
    return n;
  }();
  return names;
}

bool IsCompareFigure(const std::string& name) {
  const auto& n = CompareFigureNames();
  if (std::find(n.begin(), n.end(), name) != n.end()) return true;
  const std::string prefix = std::string(kByCategory) + ".";
  return name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0;
}

std::string ResultsScenarioFile(const std::string& path, const std::string& json) {
  const Json j = ParseResults(path, json);
  const Json& file = j["scenario"].contains("file") ? j["scenario"]["file"] : Json();
  return file.is_string() ? file.get<std::string>() : std::string();
}

CompareOutcome CompareResults(const CompareInput& a, const CompareInput& b,
                              const CompareOptions& options) {
  const Json ra = ParseResults(a.path, a.json);
  const Json rb = ParseResults(b.path, b.json);
  const double threshold = options.threshold_pct;
  CompareOutcome out;
  Json report;
  report["format"] = "stratasim-compare";
  report["version"] = 1;
  report["a"] = a.path;
  report["b"] = b.path;
  report["threshold_pct"] = threshold;
  std::string& text = out.text;
  text += "A: " + a.path + "\nB: " + b.path + "\n";
  text += "threshold: " + Fmt("%g", threshold) + "% of A's value (" + Fmt("%g", threshold) +
          " percentage points for fractions of the iteration)\n\n";

  // The scenario: the summary strings of results.json, then the scenario files' keys.
  std::vector<std::vector<std::string>> rows = {{"scenario", "A", "B", ""}};
  Json scenario = Json::array();
  std::set<std::string> keys;
  std::vector<std::string> order;
  for (const Json* r : {&ra, &rb}) {
    for (const auto& kv : (*r)["scenario"].items()) {
      if (keys.insert(kv.key()).second) order.push_back(kv.key());
    }
  }
  order.push_back("tool_version");
  for (const std::string& k : order) {
    const Json& sa = k == "tool_version" ? ra : ra["scenario"];
    const Json& sb = k == "tool_version" ? rb : rb["scenario"];
    const Json va = sa.contains(k) ? sa[k] : Json();
    const Json vb = sb.contains(k) ? sb[k] : Json();
    const bool changed = va != vb;
    rows.push_back({k, Cell(va), Cell(vb), changed ? "changed" : ""});
    scenario.push_back({{"key", k}, {"a", va}, {"b", vb}, {"changed", changed}});
  }
  text += AlignedColumns(rows, 3);
  report["scenario"] = scenario;
  if (!a.scenario_yaml.empty() && !b.scenario_yaml.empty()) {
    const auto fa = FlattenYaml(a.scenario_yaml, a.scenario_path);
    const auto fb = FlattenYaml(b.scenario_yaml, b.scenario_path);
    std::map<std::string, std::string> mb(fb.begin(), fb.end());
    std::map<std::string, std::string> ma(fa.begin(), fa.end());
    std::vector<std::vector<std::string>> diff = {{"scenario file key", "A", "B"}};
    Json keys_json = Json::array();
    auto add = [&](const std::string& k, const std::string& va, const std::string& vb) {
      diff.push_back({k, va, vb});
      keys_json.push_back({{"key", k}, {"a", va}, {"b", vb}});
    };
    for (const auto& [k, v] : fa) {
      const auto it = mb.find(k);
      if (it == mb.end()) {
        add(k, v, "(absent)");
      } else if (it->second != v) {
        add(k, v, it->second);
      }
    }
    for (const auto& [k, v] : fb) {
      if (!ma.count(k)) add(k, "(absent)", v);
    }
    text += "\nscenario files: " + a.scenario_path + ", " + b.scenario_path + "\n";
    text += diff.size() == 1 ? "  no key differs\n" : AlignedColumns(diff, 3);
    report["scenario_file_keys"] = keys_json;
  } else {
    text +=
        "\nscenario files: not in both folders (put the scenario file beside results.json to "
        "list the keys that differ)\n";
    report["scenario_file_keys"] = nullptr;
  }

  // The strategies, matched by name, in A's order.
  const auto sa = ByName(ra);
  const auto sb = ByName(rb);
  std::vector<std::string> only_a, only_b, regressions;
  Json strategies = Json::array();
  for (const Json& s : ra["strategies"]) {
    const std::string name = s["name"].get<std::string>();
    const auto it = sb.find(name);
    if (it == sb.end()) {
      only_a.push_back(name);
      continue;
    }
    const Json& ja = s;
    const Json& jb = *it->second.json;
    const size_t ia = sa.at(name).index;
    const size_t ib = it->second.index;
    Json sj;
    sj["name"] = name;
    sj["ok"] = {ja["ok"], jb["ok"]};
    text += "\nstrategy " + name;
    if (ja.contains("kind") && ja["kind"].is_string()) {
      text += " (" + ja["kind"].get<std::string>() + ")";
    }
    text += "\n";
    const bool ok_a = ja["ok"].get<bool>();
    const bool ok_b = jb["ok"].get<bool>();
    if (!ok_a || !ok_b) {
      auto why = [](const Json& j) {
        return j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>()
                                                             : std::string("failed");
      };
      text += std::string("  A: ") + (ok_a ? "ok" : "failed: " + why(ja)) + "\n";
      text += std::string("  B: ") + (ok_b ? "ok" : "failed: " + why(jb)) + "\n";
      // A strategy that stopped working is the worst regression; one that started is not.
      if (ok_a && !ok_b) {
        text += "  REGRESSED: ran in A, fails in B\n";
        regressions.push_back(name + " (fails in B)");
        sj["verdict"] = "REGRESSED";
      } else {
        sj["verdict"] = "";
      }
      sj["figures"] = Json::array();
      strategies.push_back(sj);
      continue;
    }
    std::vector<std::vector<std::string>> table = {
        {"figure", "A", "B", "change", "relative", "verdict"}};
    Json figures = Json::array();
    for (const FigureSpec& spec : Specs()) {
      std::vector<std::string> names;
      if (std::string(spec.name) == kByCategory) {
        for (const std::string& c : Categories(ja, jb)) {
          names.push_back(std::string(kByCategory) + "." + c);
        }
      } else {
        names.push_back(spec.name);
      }
      for (const std::string& fig : names) {
        if (!Wanted(options, fig, spec.name)) continue;
        const std::vector<std::string> path = Split(fig);
        const auto va = FigureAt(a.path, ia, ja, path);
        const auto vb = FigureAt(b.path, ib, jb, path);
        // A figure neither side has (no MoE, no pipeline) is not a row.
        const bool present_a = ja.contains(path[0]);
        const bool present_b = jb.contains(path[0]);
        if (!va && !vb && !present_a && !present_b) continue;
        const Row r = Judge(fig, va, vb, spec, threshold);
        const std::string change = r.a && r.b ? Fmt("%+.6g", *r.b - *r.a) : "-";
        table.push_back({fig, Value(r.a), Value(r.b), change, Relative(r), r.verdict});
        if (r.verdict == "REGRESSED") regressions.push_back(name + " " + fig + " " + Moved(r));
        figures.push_back(
            {{"name", fig},
             {"a", JsonNumber(r.a)},
             {"b", JsonNumber(r.b)},
             {"change", r.a && r.b ? JsonNumber(*r.b - *r.a) : Json(nullptr)},
             {"relative", r.a && r.b && *r.a != 0 ? JsonNumber((*r.b - *r.a) / std::fabs(*r.a))
                                                  : Json(nullptr)},
             {"judged_in", r.points ? "points" : "percent"},
             {"verdict", r.verdict}});
      }
    }
    // Indented under its strategy.
    const std::string t = AlignedColumns(table, 1);
    for (size_t pos = 0, end; pos < t.size(); pos = end + 1) {
      end = t.find('\n', pos);
      if (end == std::string::npos) end = t.size();
      text += "  " + t.substr(pos, end - pos) + "\n";
    }
    sj["figures"] = figures;
    strategies.push_back(sj);
  }
  for (const Json& s : rb["strategies"]) {
    const std::string name = s["name"].get<std::string>();
    if (!sa.count(name)) only_b.push_back(name);
  }
  auto list = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  };
  text += "\n";
  if (!only_a.empty()) text += "only in A: " + list(only_a) + "\n";
  if (!only_b.empty()) text += "only in B: " + list(only_b) + "\n";
  out.regressions = static_cast<int>(regressions.size());
  if (regressions.empty()) {
    text += "no figure regressed past the threshold\n";
  } else {
    text += std::to_string(regressions.size()) + " regression" +
            (regressions.size() == 1 ? "" : "s") + " past the threshold:\n";
    for (const std::string& r : regressions) text += "  " + r + "\n";
  }
  report["strategies"] = strategies;
  report["only_in_a"] = only_a;
  report["only_in_b"] = only_b;
  report["regressions"] = regressions;
  out.json = report.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  return out;
}

}  // namespace stratasim
