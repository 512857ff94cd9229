// The results of a shared-cluster run (docs/multi-job.md): per placement policy and job, the
// iteration time shared and alone and the slowdown, and per policy the cluster's utilisation.
// A console table, and the results.json / results.csv of such a run (docs/report-formats.md
// describes the strategies' files; these are their jobs counterparts, "format":
// "stratasim-jobs-results").
#ifndef STRATASIM_REPORT_JOBS_TABLE_H_
#define STRATASIM_REPORT_JOBS_TABLE_H_

#include <string>
#include <vector>

namespace stratasim {

struct JobOutcome {
  std::string name;
  std::string kind;       // its strategy's kind
  std::vector<int> gpus;  // the cluster GPU of each rank
  double arrival_s = 0;
  double shared_iteration_s = 0;  // mean measured iteration, all jobs running
  double alone_iteration_s = 0;   // the same job alone on the same GPUs
  double slowdown = 0;            // shared / alone
  bool ok = true;
  std::string error;
};

struct PolicyOutcome {
  std::string policy;
  std::vector<JobOutcome> jobs;  // in the scenario's order
  double makespan_s = 0;         // of the shared run: the last task's end
  // Sum over the cluster's GPUs of the time some compute kernel ran on it, over GPUs x makespan.
  double gpu_busy_fraction = 0;
  double allocated_fraction = 0;  // GPUs placed / GPUs of the cluster
  bool ok = true;
  std::string error;
};

struct JobsResults {
  std::string scenario_name;
  std::string scenario_file;
  std::string tool_version;
  int cluster_gpus = 0;
  std::vector<PolicyOutcome> policies;
};

std::string FormatJobsTable(const JobsResults& r);
std::string JobsResultsToJson(const JobsResults& r);
// One row per policy and job; the policy's figures repeat on its rows.
std::string JobsResultsToCsv(const JobsResults& r);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_JOBS_TABLE_H_
