// How many micro-batches a data-parallel replica runs per iteration.
#ifndef STRATASIM_STRATEGIES_BATCHING_H_
#define STRATASIM_STRATEGIES_BATCHING_H_

#include <string>

#include "core/scenario.h"
#include "core/strategy_options.h"

namespace stratasim {

// training.global_batch / (micro_batch x replicas): each replica accumulates gradients over
// that many micro-batches. When it is not an integer, raises opt.Fail naming `who` (e.g. "data
// parallelism over 16 GPUs") and the numbers.
int MicroBatchesPerReplica(const TrainingSpec& tr, int replicas, const std::string& who,
                           const OptionReader& opt);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_BATCHING_H_
