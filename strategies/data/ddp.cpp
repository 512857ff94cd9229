#include "strategies/data/ddp.h"

#include "core/collective_names.h"
#include "models/memory.h"
#include "models/workload.h"
#include "strategies/batching.h"
#include "strategies/data/data_parallel.h"
#include "strategies/gradient_buckets.h"

namespace stratasim {
const OptionSpecs& DdpOptions() {
  static const OptionSpecs options = {
      Size("bucket_size",
           "gradient bucket cap (PyTorch's bucket_cap_mb = 25): smaller buckets start "
           "communicating earlier but pay the per-collective latency more often")
          .Default("25MiB"),
      Flag("overlap",
           "all-reduce each bucket as soon as the backward pass has produced it; "
           "false: after the backward pass ends")
          .Default("true"),
      OneOf("algorithm", CollectiveAlgorithms(CollectiveKind::kAllReduce),
            "all-reduce algorithm (docs/collectives.md); auto lets the simulator's tuner "
            "choose per bucket size, as NCCL does")
          .Default("auto"),
      Flag("gradient_as_bucket_view",
           "false (as PyTorch) keeps a second copy of the gradients in the bucket buffers "
           "(memory category comm_buffers)")
          .Default("false"),
  };
  return options;
}

Plan PlanDdp(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, DdpOptions());
  const DdpSettings o = ReadDdpSettings(opt);
  opt.Finish();

  const TrainingSpec& tr = s.training;
  const int gpus = s.cluster.NumGpus();
  const int micro_batches = MicroBatchesPerReplica(
      tr, gpus, "data parallelism over " + std::to_string(gpus) + " GPUs", opt);

  // Every micro-batch has the same shape; a sampled workload (GraphSAGE) uses the counts of one
  // sampled mini-batch for all of them.
  DataParallelWork work;
  work.workload = BuildWorkload(s.model, tr.micro_batch, tr.precision, tr.seed);
  work.buckets = MakeGradientBuckets(work.workload.layers, TrainingBytesPerParam(tr.precision),
                                     o.bucket_cap_bytes);
  return LowerDataParallel(s, o, work, micro_batches);
}

}  // namespace stratasim
