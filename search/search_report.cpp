#include "search/search_report.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "core/units.h"
#include "report/aligned_columns.h"
#include "report/csv_fields.h"
#include "search/pareto.h"

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}  // namespace

namespace stratasim::search {
namespace {

using json = nlohmann::ordered_json;

bool SimulatedOk(const RankedPlan& p) {
  return p.simulated && p.simulated->ok && p.simulated->metrics.iteration_time_s > 0;
}

double MaxPeak(const Metrics& m) {
  double peak = 0;
  for (double b : m.peak_memory_bytes) peak = std::max(peak, b);
  return peak;
}

std::string KindOf(const RankedPlan& p) { return ToStrategySpec(p.plan, "").kind; }

// "tp 5.1 pp 0.3": exposed communication per category as a % of the iteration, those under
// 0.05% left out; "-" when none is left.
std::string ExposedByKind(const std::map<std::string, double>& fraction) {
  std::string out;
  for (const auto& [category, f] : fraction) {
    if (f * 100 < 0.05) continue;
    out += (out.empty() ? "" : " ") + category + Num(" %.1f", f * 100);
  }
  return out.empty() ? "-" : out;
}

std::map<std::string, double> AnalyticExposedFraction(const Estimate& e) {
  std::map<std::string, double> f;
  for (const auto& [category, s] : e.exposed_comm_s) {
    f[category] = e.iteration_s > 0 ? s / e.iteration_s : 0;
  }
  return f;
}

json PlanJson(const RankedPlan& p, int simulated_rank, bool on_front) {
  const Candidate& c = p.plan;
  json j;
  j["name"] = p.name;
  j["kind"] = KindOf(p);
  j["data"] = c.data;
  j["tensor"] = c.tensor;
  j["pipeline"] = c.pipeline;
  j["micro_batch"] = c.micro_batch;
  j["micro_batches"] = c.micro_batches;
  j["schedule"] = c.schedule;
  j["virtual_stages"] = c.virtual_stages;
  j["recompute"] = std::string(ToString(c.recompute));
  j["sequence_parallel"] = c.sequence_parallel;
  j["zero"] = std::string(ToString(c.zero));
  j["rank_order"] = c.rank_order;
  j["analytic_rank"] = p.analytic_rank;
  const Estimate& e = p.estimate;
  json a;
  a["iteration_s"] = e.iteration_s;
  a["compute_s"] = e.compute_s;
  a["bubble_s"] = e.bubble_s;
  a["optimizer_s"] = e.optimizer_s;
  a["exposed_comm_s"] = json(e.exposed_comm_s);
  a["mfu"] = e.mfu;
  a["peak_memory_bytes"] = e.peak_memory_bytes;
  j["analytic"] = a;
  if (!p.simulated) {
    j["simulated"] = nullptr;
  } else {
    const StrategyResult& r = *p.simulated;
    json sim;
    sim["ok"] = r.ok;
    if (!r.ok) {
      sim["error"] = r.error;
    } else {
      const Metrics& m = r.metrics;
      sim["rank"] = simulated_rank;
      sim["iteration_s"] = m.iteration_time_s;
      sim["mfu"] = m.mfu;
      sim["exposed_comm_fraction"] = m.exposed_comm_fraction;
      sim["exposed_comm_by_category"] = json(m.exposed_comm_by_category);
      sim["idle_fraction"] = m.idle_fraction;
      sim["peak_memory_bytes"] = MaxPeak(m);
      sim["out_of_memory"] = !m.oom_ranks.empty();
      sim["fold"] = r.fold;
    }
    j["simulated"] = sim;
  }
  j["pareto"] = on_front;
  return j;
}

}  // namespace

double JudgedTime(const RankedPlan& p) {
  return SimulatedOk(p) ? p.simulated->metrics.iteration_time_s : p.estimate.iteration_s;
}

double JudgedMemory(const RankedPlan& p) {
  return SimulatedOk(p) ? MaxPeak(p.simulated->metrics) : p.estimate.peak_memory_bytes;
}

std::vector<const RankedPlan*> SimulatedByTime(const SearchOutcome& o) {
  std::vector<const RankedPlan*> out;
  for (const RankedPlan& p : o.ranked) {
    if (p.simulated) out.push_back(&p);
  }
  std::stable_sort(out.begin(), out.end(), [](const RankedPlan* a, const RankedPlan* b) {
    const bool ok_a = SimulatedOk(*a), ok_b = SimulatedOk(*b);
    if (ok_a != ok_b) return ok_a;
    if (!ok_a) return a->analytic_rank < b->analytic_rank;
    const double ta = a->simulated->metrics.iteration_time_s;
    const double tb = b->simulated->metrics.iteration_time_s;
    return ta != tb ? ta < tb : a->analytic_rank < b->analytic_rank;
  });
  return out;
}

std::vector<size_t> SearchParetoFront(const SearchOutcome& o) {
  std::vector<std::pair<double, double>> points;
  points.reserve(o.ranked.size());
  for (const RankedPlan& p : o.ranked) points.emplace_back(JudgedTime(p), JudgedMemory(p));
  return ParetoFront(points);
}

std::string FormatSearchTable(const RunResults& header, const SearchOutcome& o) {
  std::string out = "scenario: " + header.scenario_name + " | GPUs: " + header.gpu_summary +
                    " | model: " + header.model_summary + "\n";
  const std::vector<const RankedPlan*> simulated = SimulatedByTime(o);
  out += "space: " + std::to_string(o.enumerated) + " plans; " + DescribePruned(o.pruned) +
         "; ranked " + std::to_string(o.ranked.size()) + " analytically; simulated the best " +
         std::to_string(simulated.size()) + " with contention\n\n";
  if (simulated.empty()) return out + "(no plan survived pruning)\n";
  const std::set<size_t> front = [&] {
    std::vector<size_t> f = SearchParetoFront(o);
    return std::set<size_t>(f.begin(), f.end());
  }();
  std::vector<std::vector<std::string>> rows = {
      {"rank", "plan", "analytic (ms)", "simulated (ms)", "sim/analytic", "MFU %", "mem est (GiB)",
       "mem sim (GiB)", "exposed comm % (sim)", "exposed comm % (analytic)", "idle %",
       "bubble % (analytic)", "analytic rank", "pareto"}};
  int rank = 0;
  for (const RankedPlan* p : simulated) {
    const Estimate& e = p->estimate;
    const bool on_front = front.count(static_cast<size_t>(p - o.ranked.data())) > 0;
    std::vector<std::string> row = {SimulatedOk(*p) ? std::to_string(++rank) : "-", p->name,
                                    Num("%.2f", e.iteration_s * 1e3)};
    if (!SimulatedOk(*p)) {
      const std::string why = p->simulated->ok ? "no iteration time" : p->simulated->error;
      row.push_back("FAILED: " + why.substr(0, 60));
      while (row.size() + 2 < rows[0].size()) row.push_back("-");
    } else {
      const Metrics& m = p->simulated->metrics;
      row.push_back(Num("%.2f", m.iteration_time_s * 1e3));
      row.push_back(Num("%.2f", m.iteration_time_s / e.iteration_s));
      row.push_back(Num("%.1f", m.mfu * 100));
      row.push_back(Num("%.1f", e.peak_memory_bytes / kGiB));
      row.push_back(Num("%.1f", MaxPeak(m) / kGiB) + (m.oom_ranks.empty() ? "" : " OOM"));
      row.push_back(ExposedByKind(m.exposed_comm_by_category));
      row.push_back(ExposedByKind(AnalyticExposedFraction(e)));
      row.push_back(Num("%.1f", m.idle_fraction * 100));
      row.push_back(Num("%.1f", e.iteration_s > 0 ? e.bubble_s / e.iteration_s * 100 : 0));
    }
    row.push_back(std::to_string(p->analytic_rank));
    row.push_back(on_front ? "*" : "");
    rows.push_back(row);
  }
  out += AlignedColumns(rows, 2);
  const RankedPlan* best_sim = SimulatedOk(*simulated.front()) ? simulated.front() : nullptr;
  const RankedPlan& best_analytic = o.ranked.front();
  out += "\n";
  if (best_sim == nullptr) {
    out += "no simulated plan succeeded\n";
  } else if (best_sim == &best_analytic) {
    out += "best: " + best_sim->name + " (analytic and simulated rankings agree)\n";
  } else {
    out += "best: " + best_sim->name + " (simulated; analytic rank " +
           std::to_string(best_sim->analytic_rank) + "); the analytic best " + best_analytic.name +
           " simulates at " +
           (SimulatedOk(best_analytic)
                ? Num("%.2f", best_analytic.simulated->metrics.iteration_time_s * 1e3) + " ms"
                : std::string("-")) +
           "\n";
  }
  out +=
      "pareto (*): plans no other beats on both iteration time and peak memory (simulated "
      "figures where simulated, else analytic)\n";
  return out;
}

std::string SearchJson(const RunResults& header, const SearchOutcome& o) {
  json j;
  j["format"] = "stratasim-search";
  j["version"] = 1;
  j["scenario"] = header.scenario_name;
  j["scenario_file"] = header.scenario_file;
  j["seed"] = header.seed;
  j["tool_version"] = header.tool_version;
  j["gpus"] = header.gpu_summary;
  j["model"] = header.model_summary;
  json space;
  space["enumerated"] = o.enumerated;
  json pruned = json::object();
  for (const auto& [reason, count] : o.pruned) pruned[std::string(Label(reason))] = count;
  space["pruned"] = pruned;
  space["ranked"] = o.ranked.size();
  j["space"] = space;
  const std::vector<const RankedPlan*> simulated = SimulatedByTime(o);
  std::map<const RankedPlan*, int> sim_rank;
  int rank = 0;
  for (const RankedPlan* p : simulated) {
    if (SimulatedOk(*p)) sim_rank[p] = ++rank;
  }
  const std::vector<size_t> front = SearchParetoFront(o);
  const std::set<size_t> on_front(front.begin(), front.end());
  json plans = json::array();
  for (size_t i = 0; i < o.ranked.size(); ++i) {
    const RankedPlan& p = o.ranked[i];
    plans.push_back(PlanJson(p, sim_rank.count(&p) ? sim_rank[&p] : 0, on_front.count(i) > 0));
  }
  j["plans"] = plans;
  json best;
  best["analytic"] = o.ranked.empty() ? json(nullptr) : json(o.ranked.front().name);
  best["simulated"] =
      sim_rank.empty() ? json(nullptr) : json(simulated.front()->name);  // first is rank 1
  j["best"] = best;
  json names = json::array();
  for (size_t i : front) names.push_back(o.ranked[i].name);
  j["pareto"] = names;
  return j.dump(2) + "\n";
}

namespace {

std::string CsvRow(const RankedPlan& p, bool on_front) {
  const Candidate& c = p.plan;
  const Estimate& e = p.estimate;
  std::vector<std::string> cells = {
      CsvField(p.name),
      CsvField(KindOf(p)),
      std::to_string(c.data),
      std::to_string(c.tensor),
      std::to_string(c.pipeline),
      std::to_string(c.micro_batch),
      std::to_string(c.micro_batches),
      CsvField(c.schedule),
      std::to_string(c.virtual_stages),
      CsvField(std::string(ToString(c.recompute))),
      c.sequence_parallel ? "true" : "false",
      CsvField(std::string(ToString(c.zero))),
      CsvField(c.rank_order),
      std::to_string(p.analytic_rank),
      CsvNumber(e.iteration_s),
      CsvNumber(e.mfu),
      CsvBytes(e.peak_memory_bytes),
      CsvNumber(e.bubble_s),
  };
  for (const char* k : {"tp", "pp", "dp"}) {
    auto it = e.exposed_comm_s.find(k);
    cells.push_back(CsvNumber(it == e.exposed_comm_s.end() ? 0 : it->second));
  }
  if (SimulatedOk(p)) {
    const Metrics& m = p.simulated->metrics;
    cells.push_back(CsvNumber(m.iteration_time_s));
    cells.push_back(CsvNumber(m.mfu));
    cells.push_back(CsvBytes(MaxPeak(m)));
    cells.push_back(CsvNumber(m.exposed_comm_fraction));
    cells.push_back(CsvNumber(m.idle_fraction));
    cells.push_back("");
  } else {
    for (int i = 0; i < 5; ++i) cells.push_back("");
    cells.push_back(
        p.simulated ? CsvField(p.simulated->ok ? "no iteration time" : p.simulated->error) : "");
  }
  cells.push_back(on_front ? "true" : "false");
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + cells[i];
  return line + "\n";
}

const char* kCsvHeader =
    "plan,kind,data,tensor,pipeline,micro_batch,micro_batches,schedule,virtual_stages,"
    "recompute,sequence_parallel,zero,rank_order,analytic_rank,analytic_iteration_s,"
    "analytic_mfu,analytic_peak_memory_bytes,analytic_bubble_s,analytic_exposed_tp_s,"
    "analytic_exposed_pp_s,analytic_exposed_dp_s,simulated_iteration_s,simulated_mfu,"
    "simulated_peak_memory_bytes,simulated_exposed_comm_fraction,simulated_idle_fraction,"
    "simulation_error,pareto\n";

}  // namespace

std::string SearchCsv(const SearchOutcome& o) {
  const std::vector<size_t> front = SearchParetoFront(o);
  const std::set<size_t> on_front(front.begin(), front.end());
  std::string out = kCsvHeader;
  for (size_t i = 0; i < o.ranked.size(); ++i) out += CsvRow(o.ranked[i], on_front.count(i) > 0);
  return out;
}

std::string ParetoCsv(const SearchOutcome& o) {
  std::string out = "plan,iteration_s,peak_memory_bytes,simulated,analytic_rank\n";
  for (size_t i : SearchParetoFront(o)) {
    const RankedPlan& p = o.ranked[i];
    out += CsvField(p.name) + "," + CsvNumber(JudgedTime(p)) + "," + CsvBytes(JudgedMemory(p)) +
           "," + (SimulatedOk(p) ? "true" : "false") + "," + std::to_string(p.analytic_rank) + "\n";
  }
  return out;
}

}  // namespace stratasim::search
