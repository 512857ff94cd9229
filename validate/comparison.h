// Simulated against measured: the comparison `stratasim validate` prints and writes.
//
// For one plan, the measured trace (a backend's Run) and the simulated trace (sim::Simulate on
// the backend's Describe() cluster) cover the same graph, so they compare task by task. Two
// levels:
//   - the iteration: mean iteration time over the measured iterations (core/metrics.h's
//     definition, the same for both traces);
//   - per task kind (gemm, attention, elementwise, optimizer, other, each collective kind,
//     send/recv, h2d/d2h copies): the time tasks of that kind ran, per rank and iteration
//     (summed over the measured iterations' tasks, divided by ranks x iterations). A
//     collective or transfer counts from the moment all its members had joined
//     (peers_joined_s), so that waiting for a late peer counts where the peer was late, not
//     here.
// error % = (simulated - measured) / measured x 100: positive means the simulator is
// pessimistic (predicts slower than real).
//
// With a calibration file, the plan is simulated twice, with the calibration and with the
// documented defaults, and both are compared with the same measured run: the calibration's
// effect is then seen without the run-to-run noise of the real machine.
#ifndef STRATASIM_VALIDATE_COMPARISON_H_
#define STRATASIM_VALIDATE_COMPARISON_H_

#include <string>
#include <vector>

#include "core/task_graph.h"
#include "core/trace.h"

namespace stratasim::validate {

struct KindTimes {
  std::string kind;        // "gemm", "all_reduce", "send/recv", "copy h2d", ...
  int tasks = 0;           // per measured iteration, all ranks
  double measured_s = 0;   // per rank per iteration
  double simulated_s = 0;  // idem
  double default_s = 0;    // idem, simulated with the defaults (when a calibration is in use)
};

struct StrategyValidation {
  std::string name;
  std::string kind;
  bool measured = false;   // the real run completed
  bool simulated = false;  // the simulation completed
  std::string error;       // why one of them did not (empty when both did)
  double measured_iteration_s = 0;
  double simulated_iteration_s = 0;
  bool has_default = false;  // simulated a second time with the defaults
  double default_iteration_s = 0;
  std::vector<KindTimes> kinds;  // in a fixed order: compute op kinds, collectives, p2p, copies
  int tasks_measured = 0;        // tasks of the graph the real run finished (all, when it did)
  int tasks_total = 0;
  // Shrink to fit (validate/fit.h, `--fit`): when the scenario's plan had more GPUs than the run
  // had ranks, what ran (and was simulated above) is a smaller copy of it. `fit_changes` says
  // what was dropped and kept, one item each; empty when the plan ran as written.
  std::vector<std::string> fit_changes;
  int full_gpus = 0;  // GPUs of the scenario's plan (0: not shrunk)
  int fit_gpus = 0;   // GPUs of the plan that ran
  // The scenario's plan, unshrunk, simulated on the scenario's own cluster (with the
  // calibration, when one is given): what the validated copy stands for.
  bool full_simulated = false;
  double full_simulated_iteration_s = 0;
  std::string full_error;  // why the full plan could not be simulated, when it could not
};

struct ValidationReport {
  std::string scenario;
  std::string backend;      // "host", "cuda"
  std::string hardware;     // what the backend runs on, one line
  std::string calibration;  // file the simulation used, empty for the defaults
  int ranks = 0;
  int warmup_iterations = 0;
  int measured_iterations = 0;
  std::vector<StrategyValidation> strategies;
};

// (simulated - measured) / measured x 100; 0 when both are 0, +inf-free: a measured 0 with a
// simulated time gives 100 x sign.
double ErrorPercent(double simulated, double measured);

// Mean iteration time of `t` over iterations [warmup, warmup + measured).
double IterationSeconds(const TaskGraph& g, const ExecutionTrace& t, int warmup, int measured);

// Fills `v.kinds` and the iteration times from complete traces of `g`; `with_defaults`, when
// not null, is the simulation with the default cost model (calibration runs).
void CompareTraces(const TaskGraph& g, const ExecutionTrace& measured,
                   const ExecutionTrace& simulated, const ExecutionTrace* with_defaults, int warmup,
                   int measured_iterations, StrategyValidation* v);

// The console table: per strategy, the iteration row then one row per task kind, with
// measured and simulated side by side (ms) and the error. Deterministic formatting.
std::string FormatValidationTable(const ValidationReport& r);

// {"format": "stratasim-validation", "version": 1, ...} with every figure in seconds.
std::string ValidationToJson(const ValidationReport& r);

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_COMPARISON_H_
