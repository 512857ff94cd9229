// Data parallelism beyond bulk-synchronous (issue #23): a sharded parameter server, bulk- or
// stale-synchronous (Ho et al., "More Effective Distributed ML via a Stale Synchronous Parallel
// Parameter Server", NIPS 2013), and decentralised DC-S3GD (Rigazzi et al., arXiv 1911.02516).
// All are simulated over the scenario's warm-up + measured iterations, so that staleness and
// waiting show in the trace (strategies/async/staleness.h measures them).
#ifndef STRATASIM_STRATEGIES_ASYNC_ASYNC_H_
#define STRATASIM_STRATEGIES_ASYNC_ASYNC_H_

#include "core/scenario.h"
#include "core/strategy_options.h"
#include "strategies/plan.h"

namespace stratasim {

// Kinds `parameter-server` (BSP, staleness 0) and `ssp` (option staleness >= 1).
const OptionSpecs& ParameterServerOptions();
const OptionSpecs& SspOptions();
Plan PlanParameterServer(const Scenario& s, const StrategySpec& spec);

// Kind `dc-s3gd`.
const OptionSpecs& DcS3gdOptions();
Plan PlanDcS3gd(const Scenario& s, const StrategySpec& spec);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_ASYNC_ASYNC_H_
