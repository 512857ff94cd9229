#include "strategies/data/ddp.h"

#include <cmath>
#include <cstdio>

#include "core/collective_names.h"
#include "core/units.h"
#include "models/memory.h"
#include "models/workload.h"
#include "strategies/data/ddp_step.h"
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

  DdpStep step(s, o, opt);
  const Workload& w = step.workload();
  const std::vector<GradientBucket> buckets =
      MakeGradientBuckets(w.layers, step.grad_bytes(), o.bucket_cap_bytes);
  double grad_total = 0;
  for (const GradientBucket& b : buckets) grad_total += b.params * step.grad_bytes();

  Plan plan = step.Lower(
      // One all-reduce per bucket, on the communication stream, in bucket order.
      [&](const GradientsReady& ready) {
        std::vector<std::vector<TaskId>> step_deps(step.gpus());
        for (size_t k = 0; k < buckets.size(); ++k) {
          const std::vector<TaskId> ids = step.AddBucketAllReduce(
              ready, buckets[k].ready_after_layer, buckets[k].params * step.grad_bytes(),
              "it" + std::to_string(ready.iteration) + "/allreduce/bucket" + std::to_string(k));
          for (int r = 0; r < step.gpus(); ++r) step_deps[r].push_back(ids[r]);
        }
        return step_deps;
      },
      // DDP's Reducer copies gradients into flat bucket buffers unless gradients are views
      // into them (gradient_as_bucket_view, PyTorch >= 1.7).
      [&](TaskGraph& g, const TaskPlace& at) {
        if (!o.bucket_view) AddMemory(g, at, "ddp_buckets", "comm_buffers", grad_total);
      });

  AddDdpNotes(step, buckets.size(), grad_total, plan);
  return plan;
}

}  // namespace stratasim
