// Strategy kind `chakra`: the task graph of Chakra execution traces (chakra/import.h), made by
// another tool (ASTRA-sim's workloads, PyTorch's converter) or by `stratasim chakra-export`,
// simulated on the scenario's cluster. The plan is the traces' graph, unchanged; the scenario's
// model and training only give the batch for throughput figures and the iterations.
#ifndef STRATASIM_STRATEGIES_CHAKRA_CHAKRA_STRATEGY_H_
#define STRATASIM_STRATEGIES_CHAKRA_CHAKRA_STRATEGY_H_

#include "strategies/plan.h"

namespace stratasim {

Plan PlanChakra(const Scenario& s, const StrategySpec& spec);
const OptionSpecs& ChakraOptions();

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_CHAKRA_CHAKRA_STRATEGY_H_
