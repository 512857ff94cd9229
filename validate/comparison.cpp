#include "validate/comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/metrics.h"

namespace stratasim::validate {
namespace {

// Position of a kind in the table: compute op kinds, collectives, transfers, copies.
std::vector<std::string> KindOrder() {
  std::vector<std::string> order;
  for (OpKind k : kAllOpKinds) {
    order.emplace_back(ToString(k));
  }
  for (CollectiveKind k : kAllCollectiveKinds) order.emplace_back(ToString(k));
  order.emplace_back("send/recv");
  order.emplace_back("copy h2d");
  order.emplace_back("copy d2h");
  return order;
}

// The kind a task is compared under; empty for memory events.
std::string KindOf(const TaskGraph& g, const Task& t) {
  switch (t.kind) {
    case TaskKind::kCompute:
      return std::string(ToString(t.op));
    case TaskKind::kCollective:
      return std::string(ToString(g.collectives()[static_cast<std::size_t>(t.collective)].kind));
    case TaskKind::kSend:
    case TaskKind::kRecv:
      return "send/recv";
    case TaskKind::kCopy:
      return t.copy == CopyDirection::kHostToDevice ? "copy h2d" : "copy d2h";
    case TaskKind::kMemory:
      return "";
  }
  return "";
}

double Busy(const Task& t, const TraceRecord& r) {
  const bool waits =
      t.kind == TaskKind::kCollective || t.kind == TaskKind::kSend || t.kind == TaskKind::kRecv;
  return r.end_s - (waits ? std::max(r.start_s, r.peers_joined_s) : r.start_s);
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string Ms(double s) { return Fixed(s * 1e3, 3); }

std::string Percent(double simulated, double measured) {
  const double e = ErrorPercent(simulated, measured);
  return (e > 0 ? "+" : "") + Fixed(e, 1);
}

}  // namespace

double ErrorPercent(double simulated, double measured) {
  if (measured == 0) return simulated == 0 ? 0 : (simulated > 0 ? 100 : -100);
  return (simulated - measured) / measured * 100;
}

double IterationSeconds(const TaskGraph& g, const ExecutionTrace& t, int warmup, int measured) {
  MetricsInput in;
  in.warmup_iterations = warmup;
  in.measured_iterations = measured;
  return ComputeMetrics(g, t, in).iteration_time_s;
}

void CompareTraces(const TaskGraph& g, const ExecutionTrace& measured,
                   const ExecutionTrace& simulated, const ExecutionTrace* with_defaults, int warmup,
                   int measured_iterations, StrategyValidation* v) {
  if (measured.records.size() != g.tasks().size() || simulated.records.size() != g.tasks().size() ||
      (with_defaults && with_defaults->records.size() != g.tasks().size())) {
    throw Error("comparison: traces do not cover the graph's " + std::to_string(g.tasks().size()) +
                " tasks");
  }
  v->measured_iteration_s = IterationSeconds(g, measured, warmup, measured_iterations);
  v->simulated_iteration_s = IterationSeconds(g, simulated, warmup, measured_iterations);
  v->has_default = with_defaults != nullptr;
  if (with_defaults) {
    v->default_iteration_s = IterationSeconds(g, *with_defaults, warmup, measured_iterations);
  }
  std::map<std::string, KindTimes> by_kind;
  for (const Task& t : g.tasks()) {
    if (t.iteration < warmup || t.iteration >= warmup + measured_iterations) continue;
    const std::string kind = KindOf(g, t);
    if (kind.empty()) continue;
    KindTimes& k = by_kind[kind];
    k.kind = kind;
    ++k.tasks;
    k.measured_s += Busy(t, measured.records[static_cast<std::size_t>(t.id)]);
    k.simulated_s += Busy(t, simulated.records[static_cast<std::size_t>(t.id)]);
    if (with_defaults) {
      k.default_s += Busy(t, with_defaults->records[static_cast<std::size_t>(t.id)]);
    }
  }
  const double per = static_cast<double>(std::max(1, g.num_ranks())) * measured_iterations;
  v->kinds.clear();
  for (const std::string& name : KindOrder()) {
    auto it = by_kind.find(name);
    if (it == by_kind.end()) continue;
    KindTimes k = it->second;
    k.tasks = static_cast<int>(std::lround(k.tasks / static_cast<double>(measured_iterations)));
    k.measured_s /= per;
    k.simulated_s /= per;
    k.default_s /= per;
    v->kinds.push_back(k);
  }
}

std::string FormatValidationTable(const ValidationReport& r) {
  // With a calibration, the defaults' simulation comes first, then the calibrated one.
  bool defaults = false;
  for (const StrategyValidation& s : r.strategies) defaults = defaults || s.has_default;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"strategy", "what", "tasks", "measured (ms)"};
  if (defaults) {
    head.insert(head.end(), {"default sim (ms)", "error %", "calibrated sim (ms)", "error %"});
  } else {
    head.insert(head.end(), {"simulated (ms)", "error %"});
  }
  rows.push_back(head);
  auto figures = [&](std::vector<std::string> row, double measured, double simulated,
                     double with_defaults) {
    row.push_back(Ms(measured));
    if (defaults) {
      row.push_back(Ms(with_defaults));
      row.push_back(Percent(with_defaults, measured));
    }
    row.push_back(Ms(simulated));
    row.push_back(Percent(simulated, measured));
    rows.push_back(row);
  };
  for (const StrategyValidation& s : r.strategies) {
    if (!s.measured || !s.simulated) {
      rows.push_back({s.name, "FAILED: " + s.error});
      continue;
    }
    figures({s.name, "iteration", ""}, s.measured_iteration_s, s.simulated_iteration_s,
            s.default_iteration_s);
    if (!s.fit_changes.empty() && s.full_simulated) {
      // The full plan has no measured counterpart: only its simulated time, in the column of
      // the simulation that used the same cost model.
      std::vector<std::string> row = {"", "full plan, " + std::to_string(s.full_gpus) + " GPUs", "",
                                      ""};
      if (defaults) row.insert(row.end(), {"", ""});
      row.insert(row.end(), {Ms(s.full_simulated_iteration_s), ""});
      rows.push_back(row);
    }
    for (const KindTimes& k : s.kinds) {
      figures({"", "  " + k.kind, std::to_string(k.tasks)}, k.measured_s, k.simulated_s,
              k.default_s);
    }
  }
  auto failed = [](const std::vector<std::string>& row) {
    return row.size() > 1 && row[1].rfind("FAILED", 0) == 0;
  };
  std::vector<std::size_t> width(head.size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      // A failure message spans the rest of the line and does not widen its column.
      if (failed(row) && c == 1) continue;
      width[c] = std::max(width[c], row[c].size());
    }
  }
  std::string out = "scenario: " + r.scenario + " | backend: " + r.backend + " (" + r.hardware +
                    ") | ranks: " + std::to_string(r.ranks) +
                    " | iterations: " + std::to_string(r.warmup_iterations) + " warm-up + " +
                    std::to_string(r.measured_iterations) + " measured | cost model: " +
                    (r.calibration.empty() ? "defaults" : "calibration " + r.calibration) + "\n\n";
  auto line = [&](const std::vector<std::string>& row) {
    std::string l;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool right = c >= 2;
      std::string cell = row[c];
      if (!(failed(row) && c == 1) && cell.size() < width[c]) {
        const std::string pad(width[c] - cell.size(), ' ');
        cell = right ? pad + cell : cell + pad;
      }
      l += (c ? "  " : "") + cell;
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(rows[0]);
  std::vector<std::string> rule;
  for (std::size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (std::size_t i = 1; i < rows.size(); ++i) line(rows[i]);
  out +=
      "\nerror % = (simulated - measured) / measured; per-kind times are per rank and "
      "iteration, collectives counted from when all members had joined.\n";
  std::string shrunk;
  for (const StrategyValidation& s : r.strategies) {
    if (s.fit_changes.empty()) continue;
    shrunk += "  " + s.name + ": ran on " + std::to_string(s.fit_gpus) + " of the plan's " +
              std::to_string(s.full_gpus) + " GPUs:";
    for (const std::string& c : s.fit_changes) shrunk += "\n    " + c;
    shrunk += "\n    full plan (" + std::to_string(s.full_gpus) +
              " GPUs, the scenario's cluster): " +
              (s.full_simulated ? "simulated iteration " + Ms(s.full_simulated_iteration_s) + " ms"
                                : "not simulated: " + s.full_error) +
              "\n";
  }
  if (!shrunk.empty()) {
    out += "\nshrunk to fit (--fit; measured and simulated above: the shrunk plan):\n" + shrunk;
  }
  return out;
}

std::string ValidationToJson(const ValidationReport& r) {
  nlohmann::ordered_json j;
  j["format"] = "stratasim-validation";
  j["version"] = 1;
  j["scenario"] = r.scenario;
  j["backend"] = r.backend;
  j["hardware"] = r.hardware;
  j["calibration"] = r.calibration;
  j["ranks"] = r.ranks;
  j["warmup_iterations"] = r.warmup_iterations;
  j["measured_iterations"] = r.measured_iterations;
  j["strategies"] = nlohmann::ordered_json::array();
  for (const StrategyValidation& s : r.strategies) {
    nlohmann::ordered_json o;
    o["name"] = s.name;
    o["kind"] = s.kind;
    o["measured"] = s.measured;
    o["simulated"] = s.simulated;
    o["error"] = s.error;
    o["tasks_measured"] = s.tasks_measured;
    o["tasks_total"] = s.tasks_total;
    if (s.measured && s.simulated) {
      o["iteration"] = {
          {"measured_s", s.measured_iteration_s},
          {"simulated_s", s.simulated_iteration_s},
          {"error_percent", ErrorPercent(s.simulated_iteration_s, s.measured_iteration_s)}};
      if (s.has_default) {
        o["iteration"]["default_simulated_s"] = s.default_iteration_s;
        o["iteration"]["default_error_percent"] =
            ErrorPercent(s.default_iteration_s, s.measured_iteration_s);
      }
      nlohmann::ordered_json kinds = nlohmann::ordered_json::array();
      for (const KindTimes& k : s.kinds) {
        nlohmann::ordered_json e = {{"kind", k.kind},
                                    {"tasks", k.tasks},
                                    {"measured_s", k.measured_s},
                                    {"simulated_s", k.simulated_s},
                                    {"error_percent", ErrorPercent(k.simulated_s, k.measured_s)}};
        if (s.has_default) {
          e["default_simulated_s"] = k.default_s;
          e["default_error_percent"] = ErrorPercent(k.default_s, k.measured_s);
        }
        kinds.push_back(e);
      }
      o["kinds"] = kinds;
    }
    if (!s.fit_changes.empty()) {
      nlohmann::ordered_json fit = {
          {"gpus", s.fit_gpus}, {"full_gpus", s.full_gpus}, {"changes", s.fit_changes}};
      if (s.full_simulated) {
        fit["full_plan"] = {{"simulated_iteration_s", s.full_simulated_iteration_s}};
      } else {
        fit["full_plan"] = {{"error", s.full_error}};
      }
      o["fit"] = fit;
    }
    j["strategies"].push_back(o);
  }
  return j.dump(2) + "\n";
}

}  // namespace stratasim::validate
