#include "cli/validate_fit.h"

#include <vector>

#include "cli/run_scenario.h"
#include "core/error.h"

namespace stratasim {

FitPlanned FitForValidation(const Scenario& s, const Scenario& sv, const StrategySpec& spec,
                            int ranks, const validate::FitPolicy& policy,
                            const std::function<ClusterSpec(int)>& run_cluster) {
  FitPlanned out{sv, spec, std::nullopt, ""};
  try {
    const validate::Fit fit = validate::FitToRanks(s, spec, ranks, policy);
    if (!fit.shrunk) return out;
    // The shrunk scenario's model and batch, on the run's cluster with the run's settings.
    out.scenario.model = fit.scenario.model;
    out.scenario.training.global_batch = fit.scenario.training.global_batch;
    out.scenario.cluster = run_cluster(fit.gpus);
    out.scenario.strategies = {fit.strategy};
    out.spec = fit.strategy;
    out.fit = fit;
  } catch (const validate::FitRefused& e) {
    out.refused = std::string("cannot be shrunk: ") + e.what();
  }
  return out;
}

void ReportFit(const Scenario& s, const Scenario& sv, const StrategySpec& spec,
               const validate::Fit& fit, validate::StrategyValidation* v) {
  if (!fit.shrunk) return;
  v->fit_changes = fit.changes;
  v->full_gpus = fit.full_gpus;
  v->fit_gpus = fit.gpus;
  Scenario full = s;
  full.strategies = {spec};
  full.simulation.calibration = sv.simulation.calibration;
  try {
    const std::vector<StrategyRun> runs = RunStrategies(full, {spec.name});
    if (runs.size() != 1) throw Error("the full plan gave no result");
    if (!runs[0].result.ok) throw Error(runs[0].result.error);
    v->full_simulated_iteration_s = runs[0].result.metrics.iteration_time_s;
    v->full_simulated = true;
  } catch (const Error& e) {
    v->full_error = e.what();
  }
}

}  // namespace stratasim
