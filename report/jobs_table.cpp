#include "report/jobs_table.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "report/aligned_columns.h"
#include "report/csv_fields.h"

namespace stratasim {
namespace {

using Json = nlohmann::ordered_json;

std::string Fixed(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string Ms(double s) { return Fixed("%.3f", s * 1e3); }
std::string Percent(double f) { return Fixed("%.1f%%", f * 100); }

// "0-7,16-23": the GPUs of a job as runs of consecutive ids.
std::string GpuRuns(const std::vector<int>& gpus) {
  std::string out;
  for (size_t i = 0; i < gpus.size();) {
    size_t k = i;
    while (k + 1 < gpus.size() && gpus[k + 1] == gpus[k] + 1) ++k;
    if (!out.empty()) out += ",";
    out += std::to_string(gpus[i]);
    if (k > i) out += "-" + std::to_string(gpus[k]);
    i = k + 1;
  }
  return out;
}

}  // namespace

std::string FormatJobsTable(const JobsResults& r) {
  std::vector<std::vector<std::string>> rows = {
      {"policy", "job", "kind", "GPUs", "shared ms", "alone ms", "slowdown", "busy", "allocated"}};
  for (const PolicyOutcome& p : r.policies) {
    if (!p.ok) {
      rows.push_back({p.policy, "-", "-", "-", "failed", "", "", "", ""});
      continue;
    }
    for (const JobOutcome& j : p.jobs) {
      rows.push_back({p.policy, j.name, j.kind, GpuRuns(j.gpus),
                      j.ok ? Ms(j.shared_iteration_s) : "failed",
                      j.ok ? Ms(j.alone_iteration_s) : "", j.ok ? Fixed("%.3fx", j.slowdown) : "",
                      Percent(p.gpu_busy_fraction), Percent(p.allocated_fraction)});
    }
  }
  std::string out = AlignedColumns(rows, 4);
  for (const PolicyOutcome& p : r.policies) {
    if (!p.ok) out += p.policy + ": " + p.error + "\n";
    for (const JobOutcome& j : p.jobs) {
      if (!j.ok) out += p.policy + " / " + j.name + ": " + j.error + "\n";
    }
  }
  return out;
}

std::string JobsResultsToJson(const JobsResults& r) {
  Json j;
  j["format"] = "stratasim-jobs-results";
  j["version"] = 1;
  j["scenario"] = r.scenario_name;
  j["scenario_file"] = r.scenario_file;
  j["tool_version"] = r.tool_version;
  j["cluster_gpus"] = r.cluster_gpus;
  Json policies = Json::array();
  for (const PolicyOutcome& p : r.policies) {
    Json pj;
    pj["policy"] = p.policy;
    pj["ok"] = p.ok;
    if (!p.ok) pj["error"] = p.error;
    pj["makespan_s"] = p.ok ? Json(p.makespan_s) : Json(nullptr);
    pj["gpu_busy_fraction"] = p.ok ? Json(p.gpu_busy_fraction) : Json(nullptr);
    pj["allocated_fraction"] = p.allocated_fraction;
    Json jobs = Json::array();
    for (const JobOutcome& o : p.jobs) {
      Json oj;
      oj["name"] = o.name;
      oj["kind"] = o.kind;
      oj["ok"] = o.ok;
      if (!o.ok) oj["error"] = o.error;
      oj["gpus"] = o.gpus;
      oj["arrival_s"] = o.arrival_s;
      oj["shared_iteration_time_s"] = o.ok ? Json(o.shared_iteration_s) : Json(nullptr);
      oj["alone_iteration_time_s"] = o.ok ? Json(o.alone_iteration_s) : Json(nullptr);
      oj["slowdown"] = o.ok ? Json(o.slowdown) : Json(nullptr);
      jobs.push_back(oj);
    }
    pj["jobs"] = jobs;
    policies.push_back(pj);
  }
  j["policies"] = policies;
  return j.dump(2) + "\n";
}

std::string JobsResultsToCsv(const JobsResults& r) {
  std::string out =
      "policy,job,kind,gpus,arrival_s,shared_iteration_time_s,alone_iteration_time_s,slowdown,"
      "makespan_s,gpu_busy_fraction,allocated_fraction,ok\n";
  for (const PolicyOutcome& p : r.policies) {
    for (const JobOutcome& o : p.jobs) {
      const bool ok = p.ok && o.ok;
      out += CsvField(p.policy) + "," + CsvField(o.name) + "," + CsvField(o.kind) + "," +
             CsvField(GpuRuns(o.gpus)) + "," + CsvNumber(o.arrival_s) + "," +
             (ok ? CsvNumber(o.shared_iteration_s) : "") + "," +
             (ok ? CsvNumber(o.alone_iteration_s) : "") + "," + (ok ? CsvNumber(o.slowdown) : "") +
             "," + (p.ok ? CsvNumber(p.makespan_s) : "") + "," +
             (p.ok ? CsvNumber(p.gpu_busy_fraction) : "") + "," + CsvNumber(p.allocated_fraction) +
             "," + (ok ? "true" : "false") + "\n";
    }
  }
  return out;
}

}  // namespace stratasim
