#include "strategies/distributed_optimizer.h"

#include "models/memory.h"

namespace stratasim {

OptionSpecs DataParallelOptimizerOptions() {
  return {
      Flag("distributed_optimizer",
           "Megatron-LM's distributed optimizer (--use-distributed-optimizer): gradient buckets "
           "reduce-scattered over the data-parallel group, Adam on each replica's 1/d shard, "
           "parameters all-gathered per bucket; FP32 master weights and moments take 12/d bytes "
           "per parameter. With data = 1 nothing is sharded")
          .Default("false"),
      Flag("overlap_param_gather",
           "with distributed_optimizer: each bucket's parameter all-gather overlaps the next "
           "iteration's forward, whose layers wait only for their own bucket (Megatron's "
           "--overlap-param-gather); false: all-gathered on the compute stream right after the "
           "step")
          .Default("true"),
      Flag("grad_reduce_in_fp32",
           "FP32 main gradients (Megatron-Core DistributedDataParallelConfig): 4 bytes per "
           "parameter, reduced in FP32; false: gradients in the training precision")
          .Default("false"),
  };
}

double DataParallelOptimizer::GradBytes(DType precision) const {
  return fp32_grads ? 4.0 : TrainingBytesPerParam(precision);
}

DType DataParallelOptimizer::GradDType(DType precision) const {
  return fp32_grads ? DType::kFP32 : StorageDType(precision);
}

DataParallelOptimizer ReadDataParallelOptimizer(OptionReader& opt) {
  DataParallelOptimizer o;
  o.distributed = opt.Bool("distributed_optimizer");
  o.overlap_param_gather = opt.Bool("overlap_param_gather");
  if (!o.distributed && opt.Given("overlap_param_gather")) {
    throw opt.Fail("overlap_param_gather", "only applies with distributed_optimizer: true");
  }
  o.fp32_grads = opt.Bool("grad_reduce_in_fp32");
  return o;
}

std::vector<int> BucketOfLayer(const std::vector<GradientBucket>& buckets, int layers) {
  std::vector<int> of(layers, -1);
  // Buckets close in reverse layer order: bucket k holds the layers from its ready_after_layer
  // up to the previous bucket's.
  for (int i = 0; i < layers; ++i) {
    for (size_t k = 0; k < buckets.size(); ++k) {
      if (buckets[k].ready_after_layer <= i) {
        of[i] = static_cast<int>(k);
        break;
      }
    }
  }
  return of;
}

void AwaitFirstTasks(TaskGraph& g, TaskId from, int stream, const std::vector<TaskId>& dep_of) {
  std::vector<bool> done(dep_of.size(), false);
  for (TaskId id = from; id < g.next_id(); ++id) {
    const Task& t = g.task(id);
    if (t.stream != stream || t.rank < 0 || t.rank >= static_cast<int>(dep_of.size())) continue;
    if (done[t.rank]) continue;
    done[t.rank] = true;
    if (dep_of[t.rank] >= 0) g.AddDep(id, dep_of[t.rank]);
  }
}

}  // namespace stratasim
