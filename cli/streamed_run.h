// A strategy planned while it is simulated, in a child process, so that a run of many
// iterations holds a few of them at a time (docs/scale.md, "Iterations"). The child plans
// with an IterationFeed, simulates the tasks as they come, measures them as they retire
// (TraceMeter) and writes the Chrome trace as it goes; it replies with the strategy's result.
#ifndef STRATASIM_CLI_STREAMED_RUN_H_
#define STRATASIM_CLI_STREAMED_RUN_H_

#include <vector>

#include "core/scenario.h"
#include "report/atomic_file.h"
#include "report/chrome_trace.h"
#include "report/results.h"
#include "sim/executor.h"

namespace stratasim {

// Starts the child for strategy `spec` of `s`. `samples_per_iteration` and
// `tokens_per_sample` are the plan's (from a plan of a few iterations), and so is
// `rank_stage` (Plan::rank_stage: the stages the TraceMeter measures as tasks retire, before
// the child's plan is whole); `trace`, when not null, is the file the child writes the Chrome
// trace into (its caller commits it), with `trace_options`' GPUs and compression.
sim::SimulationProcess StartStreamedRun(const Scenario& s, const StrategySpec& spec,
                                        double samples_per_iteration, double tokens_per_sample,
                                        const std::vector<int>& rank_stage, AtomicFile* trace,
                                        const ChromeTraceFileOptions& trace_options = {});

// Waits for the child and returns its result (metrics, notes, MoE summary, counts), without
// name, kind and GPU count, and when `links` is given the run's link usage there. Throws
// stratasim::Error with the child's error.
StrategyResult FinishStreamedRun(sim::SimulationProcess& p, LinkUsage* links = nullptr);

}  // namespace stratasim

#endif  // STRATASIM_CLI_STREAMED_RUN_H_
