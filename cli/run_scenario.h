// Wires the pieces for one scenario: plan each strategy, simulate it, compute its metrics.
#ifndef STRATASIM_CLI_RUN_SCENARIO_H_
#define STRATASIM_CLI_RUN_SCENARIO_H_

#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/task_graph.h"
#include "core/trace.h"
#include "report/results.h"

namespace stratasim {

// A strategy's plan and trace, kept for the per-strategy output files.
struct StrategyRun {
  StrategyResult result;
  TaskGraph graph;
  ExecutionTrace trace;
};

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
                                       int jobs = 1);

// Metrics of one simulated plan of scenario `s`.
StrategyResult Evaluate(const Scenario& s, const StrategySpec& spec, const TaskGraph& g,
                        const ExecutionTrace& t, double samples_per_iteration,
                        double tokens_per_sample);

// The largest peak of the ranks of each pipeline stage (rank_stage: each rank's stage).
std::vector<double> PeakMemoryPerStage(const std::vector<int>& rank_stage,
                                       const std::vector<double>& peak_per_rank);

// Header facts of the results: scenario, seed, version, cluster and model summaries.
RunResults DescribeRun(const Scenario& s, const std::string& tool_version);

// Writes results.json, results.csv and, per strategy, <name>.trace.json (Chrome/Perfetto)
// and, when `write_graphs`, <name>.graph.json, each atomically, into `dir`. Without
// `write_traces` the Chrome traces are left out (a 100-iteration MoE run writes ~75 MB each).
void WriteOutputs(const std::string& dir, const RunResults& results,
                  const std::vector<StrategyRun>& runs, bool write_graphs,
                  bool write_traces = true);

}  // namespace stratasim

#endif  // STRATASIM_CLI_RUN_SCENARIO_H_
