#include "cli/run_scenario.h"

#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/phase.h"
#include "cli/streamed_run.h"
#include "core/cleanup.h"
#include "core/error.h"
#include "core/model_presets.h"
#include "core/resources.h"
#include "models/workload.h"
#include "report/atomic_file.h"
#include "report/chrome_trace.h"
#include "report/gzip_stream.h"
#include "report/links_json.h"
#include "report/moe_summary.h"
#include "report/results_json.h"
#include "sim/executor.h"
#include "strategies/plan.h"

namespace stratasim {

MetricsInput MetricsInputFor(const Scenario& scenario, const StrategySpec& spec, int num_ranks,
                             double samples_per_iteration, double tokens_per_sample) {
  const Scenario s = ScenarioFor(scenario, spec);  // the strategy's own precision sets its peak
  MetricsInput in;
  in.warmup_iterations = s.training.warmup_iterations;
  in.measured_iterations = s.training.measured_iterations;
  in.samples_per_iteration = samples_per_iteration;
  in.tokens_per_sample = tokens_per_sample;
  // MFU's denominator is the dense peak of the training precision; for FP8 training it is the
  // BF16 peak, so that FP8 and BF16 runs of one model compare on one scale, as NVIDIA's and
  // most published FP8 MFU figures are given (docs/report-formats.md, "mfu").
  const DType peak = StorageDType(s.training.precision);
  for (int r = 0; r < num_ranks; ++r) {
    const GpuSpec& gpu = s.cluster.GpuOfRank(r);
    in.peak_flops_per_rank.push_back(gpu.Supports(peak) ? gpu.Peak(peak) : 0.0);
    in.memory_capacity_per_rank.push_back(gpu.memory_bytes);
  }
  return in;
}

StrategyResult Evaluate(const Scenario& s, const StrategySpec& spec, const TaskGraph& g,
                        const ExecutionTrace& t, double samples_per_iteration,
                        double tokens_per_sample, const std::vector<int>& rank_stage) {
  MetricsInput in =
      MetricsInputFor(s, spec, g.num_ranks(), samples_per_iteration, tokens_per_sample);
  in.rank_stage = rank_stage;
  StrategyResult r;
  r.name = spec.name;
  r.kind = spec.kind;
  r.num_gpus = g.num_ranks();
  r.metrics = ComputeMetrics(g, t, in);
  return r;
}

std::vector<double> PeakMemoryPerStage(const std::vector<int>& rank_stage,
                                       const std::vector<double>& peak_per_rank) {
  std::vector<double> per_stage;
  for (size_t r = 0; r < rank_stage.size() && r < peak_per_rank.size(); ++r) {
    const size_t stage = static_cast<size_t>(rank_stage[r]);
    if (per_stage.size() <= stage) per_stage.resize(stage + 1, 0);
    per_stage[stage] = std::max(per_stage[stage], peak_per_rank[r]);
  }
  return per_stage;
}

namespace {

std::string Gb(double bytes) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

std::string Count(double n) {
  char buf[40];
  if (n >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.1f M", n / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", n);
  }
  return buf;
}

// What makes a plan smaller, for a refusal's message; `fold` is how one iteration's plan was
// folded (Plan::fold), empty when unknown.
std::string WhatWouldHelp(const Scenario& s, const StrategySpec& spec, const std::string& fold) {
  std::string why = "What would help: ";
  const bool folds = spec.kind == "ddp" || spec.kind == "tensor" || spec.kind == "pipeline" ||
                     spec.kind == "3d" || spec.kind == "zero1" || spec.kind == "zero2" ||
                     spec.kind == "zero3";
  if (folds && !s.simulation.fold) {
    why += "simulation.fold: auto (simulates one block of identical replicas); ";
  } else if (folds && fold.rfind("folded", 0) != 0) {
    why += "a placement that folds (one server group, rank order tpd: docs/scale.md); ";
  }
  return why + "fewer iterations (training.iterations, now " +
         std::to_string(s.training.warmup_iterations) + " warm-up + " +
         std::to_string(s.training.measured_iterations) +
         " measured); fewer micro-batches (a smaller global_batch or a larger micro_batch); "
         "fewer layers (docs/limits.md)";
}

// The memory a run may take, as a task budget: the headroom (core/resources.h) at
// kBytesPerTaskEstimate a task, or the scenario's simulation.max_tasks.
struct Budget {
  bool automatic = true;
  MemoryHeadroom headroom;
  double planned_tasks = 0;  // the plans built so far
  double largest_plan = 0;

  // The most tasks the next plan may have, every plan built so far kept in memory and this
  // one (assumed the largest) simulated after them.
  long long Limit(long long max_tasks) const {
    if (!automatic)
      return std::max<long long>(1, max_tasks - static_cast<long long>(planned_tasks));
    if (headroom.bytes <= 0) return 0x7fffffff;  // unknown: TaskIds' own limit
    const double left = headroom.bytes - planned_tasks * kGraphBytesPerTask;
    return static_cast<long long>(std::clamp(left / kBytesPerTaskEstimate, 1.0, 2147483647.0));
  }

  std::string Refusal(const Scenario& s, const StrategySpec& spec, const std::string& needs,
                      double tasks, const std::string& fold = "") const {
    std::string why = "the plan needs " + needs;
    if (automatic && headroom.bytes <= 0) {
      why +=
          ", past the 2147483647 tasks a plan may hold (the memory available could not be "
          "read)";
    } else if (automatic) {
      why += ", about " + Gb(tasks * kBytesPerTaskEstimate) + " to simulate at ~" +
             std::to_string(static_cast<int>(kBytesPerTaskEstimate)) +
             " bytes a task; this run has " + Gb(headroom.bytes) + " (" + headroom.bound + ")";
      if (planned_tasks > 0) {
        why += ", less the " + Gb(planned_tasks * kGraphBytesPerTask) +
               " the strategies before it hold";
      }
    } else {
      why += ", over simulation.max_tasks (" + std::to_string(s.simulation.max_tasks) + ")";
    }
    return why + ". " + WhatWouldHelp(s, spec, fold);
  }
};

// PlanStrategy on a thread of its own: glibc gives each thread its own arena, whose memory,
// once the plan is dropped, malloc_trim hands back to the system. Planned on this thread, a
// sizing plan's memory stayed with the process, and a forked simulation counted it as its
// own: 0.8 GB of the child's peak for GPT-175B's 5 M tasks.
Plan PlanOnItsOwnThread(const Scenario& s, const StrategySpec& spec) {
  std::optional<Plan> plan;
  std::exception_ptr error;
  std::thread planner([&] {
    try {
      plan = PlanStrategy(s, spec);
    } catch (...) {
      error = std::current_exception();
    }
  });
  planner.join();
  if (error) std::rethrow_exception(error);
  return std::move(*plan);
}

std::string IterationCount(const Scenario& s) {
  const int n = s.training.warmup_iterations + s.training.measured_iterations;
  return std::to_string(n) + (n == 1 ? " iteration" : " iterations");
}

// The fold and simulation notes a result shows.
void AddFoldNotes(StrategyResult* r) {
  if (r->fold.rfind("full: ", 0) == 0 &&
      r->fold.find("implemented for kinds") == std::string::npos) {
    r->notes.push_back("simulated in " + r->fold);
  } else if (r->fold.rfind("folded", 0) == 0) {
    r->notes.push_back(r->fold);
  }
}

}  // namespace

std::vector<StrategyRun> RunStrategies(const Scenario& s, const std::vector<std::string>& only,
                                       const RunOptions& options) {
  std::vector<const StrategySpec*> chosen;
  for (const std::string& name : only) {
    auto it = std::find_if(s.strategies.begin(), s.strategies.end(),
                           [&](const StrategySpec& x) { return x.name == name; });
    if (it == s.strategies.end()) {
      std::string names;
      for (const StrategySpec& x : s.strategies) names += (names.empty() ? "" : ", ") + x.name;
      throw ConfigError(
          s.strategies.empty() ? SourceLocation{s.file, 0, 0} : s.strategies.front().where,
          "--strategy", name, "no strategy of this name in the scenario (it has: " + names + ")");
    }
  }
  for (const StrategySpec& spec : s.strategies) {
    if (only.empty() || std::find(only.begin(), only.end(), spec.name) != only.end()) {
      chosen.push_back(&spec);
    }
  }

  struct Planned {
    const StrategySpec* spec;
    std::optional<Plan> plan;  // a whole run's plan; a streamed run's plan of a few iterations
    bool streamed = false;
    std::string error;
  };
  // Every strategy is planned (or sized) before any simulation runs, so that they share one
  // budget. Each is sized first from a plan of two iterations: a run that would not fit is
  // refused (ConfigError, exit 2) with the estimate, before its graph is built. A plan whose
  // planner adds its iterations in order is simulated while it is planned, in its child, and
  // holds a few iterations at a time; the others are planned whole here.
  Budget budget;
  budget.automatic = s.simulation.max_tasks <= 0;
  if (budget.automatic) budget.headroom = ReadMemoryHeadroom();
  const int iterations = s.training.warmup_iterations + s.training.measured_iterations;
  Scenario limited = s;
  // A run of a few iterations holds them all anyway: it is planned whole, sized from one
  // iteration. A longer one is sized from two, which also shows whether the planner adds its
  // iterations in order, as streaming needs.
  const bool may_stream = !options.whole && iterations > kStreamedIterationsHeld;
  Scenario sizing_scenario = s;
  sizing_scenario.training.warmup_iterations = 0;
  sizing_scenario.training.measured_iterations = may_stream ? 2 : 1;
  // The streamed child plans without the task limit: what it holds is bounded by retiring.
  Scenario streamed_scenario = s;
  streamed_scenario.simulation.max_tasks = 0;
  std::vector<Planned> planned;
  for (const StrategySpec* spec : chosen) {
    SetPhase("planning strategy", spec->name);
    Planned p{spec, std::nullopt, false, ""};
    const long long limit = budget.Limit(s.simulation.max_tasks);
    limited.simulation.max_tasks = sizing_scenario.simulation.max_tasks = limit;
    bool sizing = false;  // which plan hit the limit: the sizing plan, or the run's
    try {
      sizing = true;
      Plan first = PlanOnItsOwnThread(sizing_scenario, *spec);
      sizing = false;
      const double per_iteration = static_cast<double>(first.graph.tasks().size()) /
                                   sizing_scenario.training.measured_iterations;
      const double total = per_iteration * iterations;
      p.streamed = may_stream && first.graph.iteration_ordered();
      // Iterations repeat one plan, less what a plan does once: the estimate is close but
      // not exact, so only a clear excess is refused here; the limit itself stops the build.
      const double held =
          p.streamed ? per_iteration * std::min(iterations, kStreamedIterationsHeld) : total;
      if (held > 1.1 * static_cast<double>(limit)) {
        throw ConfigError(
            spec->where, spec->key_path, "",
            budget.Refusal(
                s, *spec,
                "about " + Count(held) + " tasks (" + Count(per_iteration) + " per iteration x " +
                    std::to_string(p.streamed ? std::min(iterations, kStreamedIterationsHeld)
                                              : iterations) +
                    " iterations" + (p.streamed ? " held at once" : "") + ")",
                held, first.fold));
      }
      // Task ids are 32-bit: a run past that many tasks fails in its child (TaskLimitError);
      // an estimate already past it is refused here, with the same advice as any refusal.
      if (total > static_cast<double>(kMaxTasksPerRun)) {
        throw ConfigError(
            spec->where, spec->key_path, "",
            "the plan needs about " + Count(total) + " tasks (" + Count(per_iteration) +
                " per iteration x " + std::to_string(iterations) + " iterations), past the " +
                std::to_string(kMaxTasksPerRun) + " a run may have (task ids are 32-bit). " +
                WhatWouldHelp(s, *spec, first.fold));
      }
      if (p.streamed) {
        budget.largest_plan = std::max(budget.largest_plan, held);
        first.graph = TaskGraph(0);  // only its figures are kept
        p.plan = std::move(first);
      } else {
        // The sizing plan is the run's when it has the run's iterations, warm-up included.
        p.plan = s.training.warmup_iterations == 0 &&
                         iterations == sizing_scenario.training.measured_iterations
                     ? std::move(first)
                     : PlanStrategy(limited, *spec);
        const double tasks = static_cast<double>(p.plan->graph.tasks().size());
        budget.planned_tasks += tasks;
        budget.largest_plan = std::max(budget.largest_plan, tasks);
      }
    } catch (const ConfigError&) {
      throw;
    } catch (const TaskLimitError& e) {
      throw ConfigError(
          spec->where, spec->key_path, "",
          budget.Refusal(s, *spec,
                         "more than " + Count(static_cast<double>(e.limit())) + " tasks" +
                             (sizing ? " in " + IterationCount(sizing_scenario) : ""),
                         static_cast<double>(e.limit())));
    } catch (const Error& e) {
      p.error = e.what();
    }
    planned.push_back(std::move(p));
  }
  // Each simulation child adds its own state to the plans in memory: run no more at once
  // than the headroom holds (the outputs do not depend on it).
  int jobs = options.jobs;
  if (budget.automatic && budget.headroom.bytes > 0 && budget.largest_plan > 0) {
    const double left = budget.headroom.bytes - budget.planned_tasks * kGraphBytesPerTask;
    const double per_child = budget.largest_plan * kBytesPerTaskEstimate;
    jobs = static_cast<int>(std::clamp(left / per_child, 1.0, static_cast<double>(jobs)));
  }
  if (!options.trace_dir.empty()) CreateDirectories(options.trace_dir);
#ifdef __GLIBC__
  // The sizing plans are gone; their memory goes back (PlanOnItsOwnThread).
  malloc_trim(0);
#endif
  SetPhase("simulating");
  // Simulations run in child processes (sim/executor.h), up to `jobs` at once; results are
  // kept in the scenario's order, so the outputs do not depend on `jobs`.
  std::vector<StrategyRun> runs(planned.size());
  auto finish_whole = [&](size_t i, ExecutionTrace trace) {
    Planned& p = planned[i];
    StrategyRun& run = runs[i];
    run.trace = std::move(trace);
    run.result = Evaluate(s, *p.spec, p.plan->graph, run.trace, p.plan->samples_per_iteration,
                          p.plan->tokens_per_sample, p.plan->rank_stage);
    run.result.notes = p.plan->notes;
    run.result.fold = p.plan->fold;
    run.result.tasks = static_cast<long long>(p.plan->graph.tasks().size());
    run.result.activities = run.trace.activities;
    run.result.instants = run.trace.instants;
    run.result.fused_tasks = run.trace.fused_tasks;
    if (p.plan->moe) {
      run.result.moe =
          SummarizeMoe(p.plan->graph, run.trace, s.training.warmup_iterations,
                       s.training.measured_iterations, *p.plan->moe, run.result.metrics);
      run.result.moe->is_baseline = p.plan->moe->baseline;
    }
    run.result.peak_memory_per_stage_bytes =
        PeakMemoryPerStage(p.plan->rank_stage, run.result.metrics.peak_memory_bytes);
    run.result.pipeline = p.plan->pipeline;
    run.result.solver = p.plan->solver;
    run.result.gnn = p.plan->gnn;
    run.graph = std::move(p.plan->graph);
  };
  auto finish_streamed = [&](size_t i, sim::SimulationProcess& process) {
    Planned& p = planned[i];
    StrategyRun& run = runs[i];
    StrategyResult r = FinishStreamedRun(process, &run.trace.link_usage);
    r.name = p.spec->name;
    r.kind = p.spec->kind;
    r.num_gpus = s.cluster.NumGpus();
    // The sizing plan kept its figures (the child's summary does not carry this one).
    if (r.moe && p.plan->moe) r.moe->is_baseline = p.plan->moe->baseline;
    // The partition and a planner's choices do not depend on the iterations planned.
    r.pipeline = p.plan->pipeline;
    r.solver = p.plan->solver;
    run.result = std::move(r);
    run.streamed = true;
  };
  std::vector<sim::SimulationProcess> running;
  std::vector<size_t> running_index;
  size_t next = 0;
  const size_t max_jobs = static_cast<size_t>(std::max(1, jobs));
  while (next < planned.size() || !running.empty()) {
    while (next < planned.size() && running.size() < max_jobs) {
      const size_t i = next++;
      Planned& p = planned[i];
      if (!p.plan) continue;
      try {
        if (p.streamed) {
          if (!options.trace_dir.empty()) {
            runs[i].trace_file = std::make_shared<AtomicFile>(
                options.trace_dir + "/" + ChromeTraceFileName(p.spec->name, options.trace));
          }
          running.push_back(StartStreamedRun(
              streamed_scenario, *p.spec, p.plan->samples_per_iteration, p.plan->tokens_per_sample,
              p.plan->rank_stage, runs[i].trace_file.get(), options.trace));
        } else {
          // The strategy's cluster: `stragglers: off` drops the stragglers (ScenarioFor).
          running.push_back(
              sim::StartSimulation(p.plan->graph, ScenarioFor(s, *p.spec).cluster, s.simulation));
        }
        running_index.push_back(i);
      } catch (const Error& e) {
        p.error = e.what();
      }
    }
    if (running.empty()) continue;
    const size_t k = sim::WaitForAnySimulation(running);
    const size_t i = running_index[k];
    sim::SimulationProcess process = running[k];
    running.erase(running.begin() + static_cast<long>(k));
    running_index.erase(running_index.begin() + static_cast<long>(k));
    Planned& p = planned[i];
    try {
      if (p.streamed) {
        finish_streamed(i, process);
      } else {
        finish_whole(i, sim::FinishSimulation(process));
      }
      AddFoldNotes(&runs[i].result);
    } catch (const Error& e) {
      p.error = e.what();
    }
  }
  for (size_t i = 0; i < planned.size(); ++i) {
    StrategyRun& run = runs[i];
    if (planned[i].error.empty()) continue;
    run.result = StrategyResult{};
    run.result.name = planned[i].spec->name;
    run.result.kind = planned[i].spec->kind;
    run.result.num_gpus = s.cluster.NumGpus();
    run.result.ok = false;
    run.result.error = planned[i].error;
    run.trace_file.reset();  // removes what the failed run wrote
  }
  return runs;
}

RunResults DescribeRun(const Scenario& s, const std::string& tool_version) {
  RunResults r;
  r.scenario_name = s.name;
  r.scenario_file = s.file;
  r.seed = s.training.seed;
  r.tool_version = tool_version;
  for (const ServerGroup& g : s.cluster.groups) {
    if (!r.gpu_summary.empty()) r.gpu_summary += " + ";
    r.gpu_summary +=
        std::to_string(g.count) + " x " + std::to_string(g.gpus_per_server) + " " + g.gpu;
  }
  char model[200];
  const std::string name = s.model.preset.empty() ? "custom" : s.model.preset;
  // Sequence length only means something for the language models.
  const std::string sequence = s.model.sequence > 0 && IsTransformerKind(s.model.kind)
                                   ? ", sequence " + std::to_string(s.model.sequence)
                                   : "";
  // Millions up to 9,999 M; above that %.4g would print "7.055e+04 M", so billions.
  const double params = ModelParameterCount(s.model);
  const bool billions = params >= 1e10;
  std::snprintf(model, sizeof model, "%s %s (%.4g %s parameters)%s, %s", s.model.kind.c_str(),
                name.c_str(), billions ? params / 1e9 : params / 1e6, billions ? "B" : "M",
                sequence.c_str(), std::string(ToString(s.training.precision)).c_str());
  r.model_summary = model;
  return r;
}

void WriteOutputs(const std::string& dir, const RunResults& results,
                  const std::vector<StrategyRun>& runs, bool write_graphs, bool write_traces,
                  const ChromeTraceFileOptions& trace_options) {
  CreateDirectories(dir);
  cleanup::RemoveStaleTempFiles(dir);  // what a run killed by SIGKILL left here
  for (const StrategyRun& run : runs) {
    if (!run.result.ok) continue;
    if (write_traces && run.trace_file) {
      run.trace_file->Commit();
    } else if (write_traces && !run.streamed) {
      const std::string json = ChromeTraceJson(run.graph, run.trace, trace_options.gpus);
      WriteFileAtomically(dir + "/" + ChromeTraceFileName(run.result.name, trace_options),
                          trace_options.gzip ? GzipCompress(json) : json);
    }
    if (write_graphs) {
      WriteFileAtomically(dir + "/" + run.result.name + ".graph.json", TaskGraphToJson(run.graph));
    }
  }
  // Each strategy's link usage, in results.json's order (a streamed run's came with its
  // result, into its otherwise empty trace).
  std::vector<StrategyLinks> links;
  for (const StrategyRun& run : runs) {
    links.push_back({run.result.name, run.result.ok ? std::optional<LinkUsage>(run.trace.link_usage)
                                                    : std::nullopt});
  }
  WriteFileAtomically(dir + "/links.json", LinksToJson(links));
  WriteFileAtomically(dir + "/results.csv", ResultsToCsv(results));
  // Last, so that a complete results.json means every other file is in place.
  WriteFileAtomically(dir + "/results.json", ResultsToJson(results));
}

}  // namespace stratasim
