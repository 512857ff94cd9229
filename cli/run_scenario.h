// Wires the pieces for one scenario: plan each strategy, simulate it, compute its metrics.
#ifndef STRATASIM_CLI_RUN_SCENARIO_H_
#define STRATASIM_CLI_RUN_SCENARIO_H_

#include <memory>
#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/task_graph.h"
#include "core/trace.h"
#include "report/atomic_file.h"
#include "report/chrome_trace.h"
#include "report/results.h"

namespace stratasim {

// A strategy's result and what its output files need. A plan simulated whole keeps its
// graph and trace; a streamed one (docs/scale.md, "Iterations") has neither, and wrote its
// Chrome trace as it ran into `trace_file`, which WriteOutputs puts in place.
struct StrategyRun {
  StrategyResult result;
  TaskGraph graph;
  ExecutionTrace trace;
  bool streamed = false;
  std::shared_ptr<AtomicFile> trace_file;  // a streamed run's trace; none when not asked for
};

// How RunStrategies runs the simulations.
struct RunOptions {
  int jobs = 1;  // simulations at once, each in its own process
  // Where streamed runs write their Chrome traces as they run; "" writes none.
  std::string trace_dir;
  // Simulates every plan whole, keeping its graph and trace (--write-graphs). Otherwise a
  // run of more than kStreamedIterationsHeld iterations whose planner adds them in order is
  // planned while it is simulated, and only a few iterations are ever held.
  bool whole = false;
  // The Chrome traces' GPUs and compression (--trace-gpus, --trace-format).
  ChromeTraceFileOptions trace;
};

// Options that keep every plan's graph and trace (tests that read them).
inline RunOptions WholeRuns() {
  RunOptions o;
  o.whole = true;
  return o;
}

// Iterations a streamed run holds at most at once, for its memory estimate: the one running,
// the next (taken in as the first task of this one starts), and the finished ones not yet
// retired (the executor retires in batches of a quarter of what it holds).
inline constexpr int kStreamedIterationsHeld = 3;

// Memory a task of a plan costs, in two parts. The graph (the Task, its name and
// dependencies) and, after its simulation, its trace record stay in this process until the
// outputs are written: ~160 bytes a task measured (1.58 GB of parent RSS for the 9.8 M tasks
// of DDP on one 4,096-GPU server, bench/scale_scenario.py), rounded up with the record. A
// simulation child adds the executor's per-task state: ~260 bytes a task (4.1 GB child RSS
// for the same plan, less the graph it shares). Together: 460, against 418 measured for the
// 5.0 M tasks of the 1,536-GPU GPT-175B run (docs/scale.md).
inline constexpr double kGraphBytesPerTask = 200;
inline constexpr double kSimulationBytesPerTask = 260;
inline constexpr double kBytesPerTaskEstimate = kGraphBytesPerTask + kSimulationBytesPerTask;

// Plans every strategy first (so that a bad option fails before any simulation runs:
// ConfigError propagates; so does a plan whose estimate does not fit the memory this run may
// take, core/resources.h), then simulates each; a strategy that cannot be planned or
// simulated (stratasim::Error) is recorded as failed, and the others still run. Up to `jobs`
// simulations run at once, each in its own process; the results do not depend on `jobs`.
std::vector<StrategyRun> RunStrategies(const Scenario& s, const std::vector<std::string>& only,
                                       const RunOptions& options = {});

// The metrics' input for a plan of `num_ranks` ranks of strategy `spec` of scenario `s`: the
// peaks are those of the strategy's precision (ScenarioFor).
MetricsInput MetricsInputFor(const Scenario& s, const StrategySpec& spec, int num_ranks,
                             double samples_per_iteration, double tokens_per_sample);

// Metrics of one simulated plan of scenario `s`; `rank_stage`: the plan's (Plan::rank_stage),
// whose per-stage figures are then measured too.
StrategyResult Evaluate(const Scenario& s, const StrategySpec& spec, const TaskGraph& g,
                        const ExecutionTrace& t, double samples_per_iteration,
                        double tokens_per_sample, const std::vector<int>& rank_stage = {});

// The largest peak of the ranks of each pipeline stage (rank_stage: each rank's stage).
std::vector<double> PeakMemoryPerStage(const std::vector<int>& rank_stage,
                                       const std::vector<double>& peak_per_rank);

// Header facts of the results: scenario, seed, version, cluster and model summaries.
RunResults DescribeRun(const Scenario& s, const std::string& tool_version);

// Writes results.json, results.csv, links.json (each strategy's link usage) and, per strategy,
// <name>.trace.json (Chrome/Perfetto: from the graph and trace of a whole run, or the streamed
// run's own file) and, when `write_graphs`, <name>.graph.json, each atomically, into `dir`.
// Without `write_traces` the Chrome traces are left out (a 100-iteration MoE run writes ~75 MB
// each).
void WriteOutputs(const std::string& dir, const RunResults& results,
                  const std::vector<StrategyRun>& runs, bool write_graphs, bool write_traces = true,
                  const ChromeTraceFileOptions& trace_options = {});

}  // namespace stratasim

#endif  // STRATASIM_CLI_RUN_SCENARIO_H_
