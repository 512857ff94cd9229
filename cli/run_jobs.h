// `stratasim run` on a shared-cluster scenario (docs/multi-job.md): each job planned on a
// cluster of its own size and server design, then, per placement policy, all jobs placed and
// merged into one graph simulated once on the whole cluster (their flows share the links), and
// each job simulated alone on the same GPUs; the slowdown is the ratio of the two.
#ifndef STRATASIM_CLI_RUN_JOBS_H_
#define STRATASIM_CLI_RUN_JOBS_H_

#include <string>
#include <vector>

#include "core/placement.h"
#include "core/scenario.h"
#include "report/jobs_table.h"

namespace stratasim {

// The scenario job `job` is planned in: its model and training, its strategy, on
// job.gpus GPUs of the scenario's server design (whole servers, or one server cut to the
// job's GPUs), folding off (a folded plan has no per-GPU tasks to place).
Scenario JobScenario(const Scenario& s, const JobSpec& job);

// The jobs as placement sees them: GPUs, and the tensor (x context) and pipeline degrees read
// from the strategy's options (tensor or degree, context, stages; 1 when not given, or when
// rank_order is not the default "tpd").
std::vector<PlacementJob> PlacementJobs(const Scenario& s);

// The cluster's shape for placement (one server group; leaf-spine leaves, or one leaf).
ClusterShape ShapeOf(const ClusterSpec& cluster);

// Runs every placement policy of `s` (or only those named in `only`); up to `parallel`
// simulations at once, each in its own process (the results do not depend on it). A job that
// cannot be planned throws (ConfigError for bad options, stratasim::Error otherwise).
JobsResults RunJobs(const Scenario& s, int parallel, const std::string& tool_version);

// Writes results.json and results.csv into `dir`, each atomically (results.json last).
void WriteJobsOutputs(const std::string& dir, const JobsResults& r);

}  // namespace stratasim

#endif  // STRATASIM_CLI_RUN_JOBS_H_
