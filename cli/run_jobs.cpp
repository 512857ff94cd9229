#include "cli/run_jobs.h"

#include <algorithm>
#include <memory>

#include "cli/child_pool.h"
#include "cli/merge_jobs.h"
#include "cli/phase.h"
#include "cli/run_scenario.h"
#include "core/cleanup.h"
#include "core/error.h"
#include "core/intervals.h"
#include "report/atomic_file.h"
#include "sim/executor.h"
#include "strategies/plan.h"

namespace stratasim {
namespace {

// An option given as a whole number, or `fallback`. The strategy checks its options itself
// when it is planned (before any placement), so a bad value never gets this far.
int IntOption(const StrategySpec& spec, const std::string& key, int fallback) {
  auto it = spec.options.find(key);
  if (it == spec.options.end()) return fallback;
  try {
    return std::stoi(it->second.text);
  } catch (const std::exception&) {
    return fallback;
  }
}

// One simulation to run: a policy's shared run (job == -1) or one job alone.
struct SimJob {
  size_t policy = 0;
  int job = -1;
  std::vector<size_t> jobs;  // the jobs in the merged graph
  MergedJobs merged;
};

// GPU busy time (the union of the compute kernels on each GPU) over GPUs x makespan.
double BusyFraction(const std::vector<const TaskGraph*>& graphs, const MergedJobs& merged,
                    const ExecutionTrace& trace, int num_gpus) {
  std::vector<std::vector<Interval>> busy(static_cast<size_t>(num_gpus));
  for (size_t j = 0; j < graphs.size(); ++j) {
    for (const Task& t : graphs[j]->tasks()) {
      if (t.kind != TaskKind::kCompute) continue;
      const TraceRecord& r = trace.records.at(static_cast<size_t>(merged.first_task[j] + t.id));
      busy[static_cast<size_t>(r.rank)].push_back({r.start_s, r.end_s});
    }
  }
  if (trace.makespan_s <= 0) return 0;
  double sum = 0;
  for (std::vector<Interval>& b : busy) {
    sum += CoveredLength(Union(std::move(b)), 0, trace.makespan_s);
  }
  return sum / (static_cast<double>(num_gpus) * trace.makespan_s);
}

}  // namespace

Scenario JobScenario(const Scenario& s, const JobSpec& job) {
  Scenario js = s;
  js.model = job.model;
  js.training = job.training;
  js.strategies = {job.strategy};
  js.jobs.clear();
  js.placement.clear();
  js.simulation.fold = false;
  ServerGroup& g = js.cluster.groups.at(0);
  if (job.gpus >= g.gpus_per_server) {
    g.count = job.gpus / g.gpus_per_server;
  } else {
    g.count = 1;
    g.gpus_per_server = job.gpus;
  }
  return js;
}

ClusterShape ShapeOf(const ClusterSpec& cluster) {
  ClusterShape c;
  c.servers = cluster.NumServers();
  c.gpus_per_server = cluster.groups.at(0).gpus_per_server;
  c.servers_per_leaf = cluster.network.kind == NetworkKind::kLeafSpine
                           ? std::max(1, cluster.network.servers_per_leaf)
                           : c.servers;
  return c;
}

std::vector<PlacementJob> PlacementJobs(const Scenario& s) {
  std::vector<PlacementJob> out;
  for (const JobSpec& job : s.jobs) {
    const StrategySpec& spec = job.strategy;
    PlacementJob p;
    p.name = job.name;
    p.gpus = job.gpus;
    p.expert = job.model.kind == "moe";
    const auto order = spec.options.find("rank_order");
    if (order == spec.options.end() || order->second.text == "tpd") {
      const int tensor = IntOption(spec, "tensor", IntOption(spec, "degree", 1));
      p.tensor = tensor * IntOption(spec, "context", 1);
      p.pipeline = IntOption(spec, "stages", 1);
    }
    out.push_back(p);
  }
  return out;
}

JobsResults RunJobs(const Scenario& s, int parallel, const std::string& tool_version) {
  JobsResults results;
  results.scenario_name = s.name;
  results.scenario_file = s.file;
  results.tool_version = tool_version;
  results.cluster_gpus = s.cluster.NumGpus();
  // Plans do not depend on the placement: each job is planned once.
  std::vector<Scenario> scenarios;
  std::vector<Plan> plans;
  for (const JobSpec& job : s.jobs) {
    SetPhase("planning job", job.name);
    scenarios.push_back(JobScenario(s, job));
    plans.push_back(PlanStrategy(scenarios.back(), job.strategy));
  }
  const ClusterShape shape = ShapeOf(s.cluster);
  const std::vector<PlacementJob> requests = PlacementJobs(s);
  int placed_gpus = 0;
  for (const JobSpec& job : s.jobs) placed_gpus += job.gpus;

  std::vector<SimJob> sims;
  for (size_t p = 0; p < s.placement.size(); ++p) {
    PolicyOutcome outcome;
    outcome.policy = s.placement[p].policy;
    outcome.allocated_fraction = static_cast<double>(placed_gpus) / s.cluster.NumGpus();
    const Placement placement = Place(outcome.policy, shape, requests);
    std::vector<PlacedJob> placed;
    for (size_t j = 0; j < s.jobs.size(); ++j) {
      JobOutcome o;
      o.name = s.jobs[j].name;
      o.kind = s.jobs[j].strategy.kind;
      o.gpus = placement[j];
      o.arrival_s = s.jobs[j].arrival_s;
      outcome.jobs.push_back(o);
      placed.push_back({o.name, &plans[j].graph, o.gpus, o.arrival_s});
    }
    results.policies.push_back(outcome);
    SimJob shared;
    shared.policy = p;
    for (size_t j = 0; j < s.jobs.size(); ++j) shared.jobs.push_back(j);
    shared.merged = MergeJobs(placed, s.cluster.NumGpus());
    sims.push_back(std::move(shared));
    for (size_t j = 0; j < s.jobs.size(); ++j) {
      SimJob alone;
      alone.policy = p;
      alone.job = static_cast<int>(j);
      alone.jobs = {j};
      alone.merged = MergeJobs({placed[j]}, s.cluster.NumGpus());
      sims.push_back(std::move(alone));
    }
  }

  SetPhase("simulating");
  auto finish = [&](SimJob& sim, const ExecutionTrace& trace) {
    PolicyOutcome& outcome = results.policies[sim.policy];
    std::vector<const TaskGraph*> graphs;
    for (size_t k = 0; k < sim.jobs.size(); ++k) {
      const size_t j = sim.jobs[k];
      graphs.push_back(&plans[j].graph);
      const ExecutionTrace jt = JobTrace(sim.merged, trace, k, plans[j].graph);
      const StrategyResult r =
          Evaluate(scenarios[j], s.jobs[j].strategy, plans[j].graph, jt,
                   plans[j].samples_per_iteration, plans[j].tokens_per_sample, plans[j].rank_stage);
      JobOutcome& o = outcome.jobs[j];
      (sim.job < 0 ? o.shared_iteration_s : o.alone_iteration_s) = r.metrics.iteration_time_s;
    }
    if (sim.job < 0) {
      outcome.makespan_s = trace.makespan_s;
      outcome.gpu_busy_fraction = BusyFraction(graphs, sim.merged, trace, s.cluster.NumGpus());
    }
  };
  auto fail = [&](const SimJob& sim, const std::string& error) {
    PolicyOutcome& outcome = results.policies[sim.policy];
    if (sim.job < 0) {
      outcome.ok = false;
      outcome.error = error;
    } else {
      outcome.jobs[static_cast<size_t>(sim.job)].ok = false;
      outcome.jobs[static_cast<size_t>(sim.job)].error = error;
    }
  };
  // Up to `parallel` children at once; results land in their own slots, so the order of
  // completion changes nothing.
  ChildPoolTasks tasks;
  tasks.start = [&](size_t i) -> std::optional<sim::SimulationProcess> {
    return sim::StartSimulation(sims[i].merged.graph, s.cluster, s.simulation);
  };
  tasks.finish = [&](size_t i, sim::SimulationProcess& process) {
    finish(sims[i], sim::FinishSimulation(process));
    sims[i].merged = MergedJobs{TaskGraph(0), {}, {}};  // done with: its memory goes back
  };
  tasks.fail = [&](size_t i, const std::string& error) {
    sims[i].merged = MergedJobs{TaskGraph(0), {}, {}};
    fail(sims[i], error);
  };
  RunChildPool(sims.size(), parallel, tasks);
  for (PolicyOutcome& outcome : results.policies) {
    for (JobOutcome& o : outcome.jobs) {
      if (o.ok && o.alone_iteration_s > 0) o.slowdown = o.shared_iteration_s / o.alone_iteration_s;
    }
  }
  return results;
}

void WriteJobsOutputs(const std::string& dir, const JobsResults& r) {
  CreateDirectories(dir);
  cleanup::RemoveStaleTempFiles(dir);
  WriteFileAtomically(dir + "/results.csv", JobsResultsToCsv(r));
  WriteFileAtomically(dir + "/results.json", JobsResultsToJson(r));
}

}  // namespace stratasim
