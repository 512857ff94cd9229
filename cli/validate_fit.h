// `stratasim validate --fit` (docs/validate.md, "Shrink to fit"): the command's side of
// validate/fit.h. Which scenario each strategy is planned on, and the report's shrink fields
// with the full plan's simulated iteration time. The multi-process flow calls the same with
// the number of processes as `ranks`.
#ifndef STRATASIM_CLI_VALIDATE_FIT_H_
#define STRATASIM_CLI_VALIDATE_FIT_H_

#include <functional>
#include <optional>
#include <string>

#include "core/scenario.h"
#include "validate/comparison.h"
#include "validate/fit.h"

namespace stratasim {

struct FitPlanned {
  Scenario scenario;  // to plan the strategy on: `sv`, or the shrunk copy on the run's cluster
  StrategySpec spec;  // the strategy as written, or its shrunk copy
  std::optional<validate::Fit> fit;  // set when the plan was shrunk
  std::string refused;               // "cannot be shrunk: ..." (validate::FitRefused), or ""
};

// Strategy `spec` of scenario `s` (as loaded, on its own cluster) shrunk to `ranks`. `sv` is
// what validate plans on without --fit (`s` on the backend's cluster, unfolded, calibrated);
// `run_cluster(n)` is the backend's cluster of n ranks, on which a shrunk copy is planned and
// simulated. A plan that fits is `sv` unchanged; one whose shape cannot be kept comes back
// with `refused` set. ConfigError (bad options) propagates, as from the planner.
FitPlanned FitForValidation(const Scenario& s, const Scenario& sv, const StrategySpec& spec,
                            int ranks, const validate::FitPolicy& policy,
                            const std::function<ClusterSpec(int)>& run_cluster);

// Fills v's shrink fields from `fit` (nothing when it did not shrink) and simulates the full
// plan, strategy `spec` of `s` on the scenario's own cluster with sv's calibration, as
// `stratasim run` would (folded where the scenario folds), for v->full_simulated_iteration_s;
// a failure is kept in v->full_error.
void ReportFit(const Scenario& s, const Scenario& sv, const StrategySpec& spec,
               const validate::Fit& fit, validate::StrategyValidation* v);

}  // namespace stratasim

#endif  // STRATASIM_CLI_VALIDATE_FIT_H_
