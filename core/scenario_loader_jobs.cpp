// The `jobs:` and `placement:` sections of a shared-cluster scenario (docs/multi-job.md):
//
//   jobs:
//     - name: gpt                    # unique, [A-Za-z0-9._-]+
//       gpus: 16                     # a multiple of the servers' GPUs, or a divisor of it
//       model: {kind: gpt, ...}      # as the scenario's model section
//       training: {global_batch: 32} # as the scenario's training section
//       strategy: {kind: 3d, options: {tensor: 4, pipeline: 2}}
//       arrival: 0s                  # optional, default 0s
//   placement: [packed, spread, topology-aware, ddlwmp]   # the policies to compare
#include <algorithm>
#include <string>
#include <vector>

#include "core/placement.h"
#include "core/scenario_loader_sections.h"
#include "core/units.h"

namespace stratasim::scenario_sections {

using yaml::Field;
using yaml::Map;

namespace {

// A job's arrival can be far later than a link latency: up to a simulated day.
constexpr double kMaxArrivalS = 86400;

double ReadArrival(const yaml::Reader& r, const Field& f) {
  const std::string text = r.String(f);
  double v = 0;
  try {
    v = ParseSeconds(text);
  } catch (const UnitError& e) {
    r.Fail(f, e.what());
  }
  if (!(v >= 0 && v <= kMaxArrivalS)) r.Fail(f, "must be in [0s, 86400s]");
  return v;
}

}  // namespace

std::vector<JobSpec> ReadJobs(const yaml::Reader& r, const Field& f, const ClusterSpec& cluster) {
  std::vector<JobSpec> out;
  std::vector<YAML::Node> name_nodes;
  int gpus_so_far = 0;
  for (const Field& item : r.List(f, true)) {
    Map m(r, item, {"name", "gpus", "model", "training", "strategy", "arrival"});
    JobSpec job;
    Field name = m.Require("name");
    job.name = r.PlainName(name);
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].name == job.name) {
        r.Fail(name, "duplicate job name (" + r.FirstAt(name_nodes[i]) + ")");
      }
    }
    job.where = r.Where(item.value);
    job.key_path = item.path;
    Field gpus = m.Require("gpus");
    job.gpus = r.Int(gpus, 1);
    job.gpus_where = r.WhereOf(gpus);
    // Each job is planned on a cluster of its own of the same server design (docs/multi-job.md):
    // whole servers, or a part of one server.
    if (cluster.groups.size() != 1) {
      r.Fail(gpus, "jobs run on a cluster of one server group (this one has " +
                       std::to_string(cluster.groups.size()) + ")");
    }
    const int per_server = cluster.groups[0].gpus_per_server;
    if (job.gpus % per_server != 0 && per_server % job.gpus != 0) {
      r.Fail(gpus, "must be a multiple of the servers' " + std::to_string(per_server) +
                       " GPUs or divide it, so that the job plans on servers of this design");
    }
    gpus_so_far += job.gpus;
    if (gpus_so_far > cluster.NumGpus()) {
      r.Fail(gpus, "the jobs up to this one need " + std::to_string(gpus_so_far) +
                       " GPUs, the cluster has " + std::to_string(cluster.NumGpus()) +
                       " (jobs hold their GPUs from the start, arrival or not)");
    }
    job.model = ReadModel(r, m.Require("model"));
    job.training = ReadTraining(r, m.Require("training"));
    Field strategy = m.Require("strategy");
    Map sm(r, strategy, {"kind", "options"});
    job.strategy.name = job.name;
    job.strategy.kind = r.Name(sm.Require("kind"));
    job.strategy.where = r.Where(strategy.value);
    job.strategy.key_path = strategy.path;
    if (auto options = sm.Get("options")) ReadStrategyOptions(r, *options, &job.strategy);
    if (auto arrival = m.Get("arrival")) job.arrival_s = ReadArrival(r, *arrival);
    out.push_back(job);
    name_nodes.push_back(name.value);
  }
  return out;
}

std::vector<PlacementChoice> ReadPlacement(const yaml::Reader& r, const Field& f) {
  std::vector<PlacementChoice> out;
  for (const Field& item : r.List(f, true)) {
    PlacementChoice c;
    c.policy = r.Name(item);
    c.where = r.WhereOf(item);
    c.key_path = item.path;
    const std::vector<std::string>& known = PlacementPolicies();
    if (std::find(known.begin(), known.end(), c.policy) == known.end()) {
      r.Fail(item, "unknown placement policy (known: " + yaml::Join(known) + ")");
    }
    for (const PlacementChoice& earlier : out) {
      if (earlier.policy == c.policy) r.Fail(item, "policy listed twice");
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace stratasim::scenario_sections
