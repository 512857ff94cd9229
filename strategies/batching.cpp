#include "strategies/batching.h"

namespace stratasim {

int MicroBatchesPerReplica(const TrainingSpec& tr, int replicas, const std::string& who,
                           const OptionReader& opt) {
  const long per_step = static_cast<long>(tr.micro_batch) * replicas;
  if (per_step <= 0 || tr.global_batch % per_step != 0) {
    throw opt.Fail("", who + " needs training.global_batch (" + std::to_string(tr.global_batch) +
                           ") to be a multiple of micro_batch (" + std::to_string(tr.micro_batch) +
                           ") x " + std::to_string(replicas) + " data-parallel replica(s)");
  }
  return static_cast<int>(tr.global_batch / per_step);
}

}  // namespace stratasim
