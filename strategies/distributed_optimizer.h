// Megatron-LM's distributed optimizer (`--use-distributed-optimizer`; Megatron-LM docs,
// "Distributed Optimizer"), shared by the tensor and 3d planners: the data-parallel gradient
// all-reduce of each bucket becomes a reduce-scatter, each of the d replicas runs Adam on its
// 1/d of the parameters (and keeps only that 1/d of the FP32 master weights and moments), and
// the updated 16-bit parameters are all-gathered bucket by bucket. With `overlap_param_gather`
// (Megatron's --overlap-param-gather) the all-gathers run on a communication stream in the
// order the next forward uses the buckets, and a layer's first forward kernel waits only for
// the all-gather of the bucket holding it; without, they run on the compute stream right after
// the step, so the next forward waits for all of them.
//
// Per-rank traffic: a reduce-scatter and an all-gather of a bucket each move (d-1)/d of it, as
// much as its all-reduce (2 (d-1)/d) when gradients and parameters have the same width.
#ifndef STRATASIM_STRATEGIES_DISTRIBUTED_OPTIMIZER_H_
#define STRATASIM_STRATEGIES_DISTRIBUTED_OPTIMIZER_H_

#include <vector>

#include "core/dtype.h"
#include "core/strategy_options.h"
#include "core/task_graph.h"
#include "strategies/gradient_buckets.h"

namespace stratasim {

// The options `distributed_optimizer`, `overlap_param_gather` and `grad_reduce_in_fp32` of the
// tensor and 3d kinds.
OptionSpecs DataParallelOptimizerOptions();

struct DataParallelOptimizer {
  bool distributed = false;          // distributed_optimizer
  bool overlap_param_gather = true;  // only with distributed
  bool fp32_grads = false;           // grad_reduce_in_fp32

  // Bytes per parameter of the gradients as kept and reduced when training in `precision`: 4
  // with FP32 main gradients, else the training copy's (models/memory.h).
  double GradBytes(DType precision) const;
  DType GradDType(DType precision) const;
  // The gradients' bytes per parameter for AdamStateBytes: 0 (the training copy's) unless FP32.
  double StateGradBytes() const { return fp32_grads ? 4 : 0; }
  // The optimizer states' sharding over the d replicas.
  int OptimizerShards(int d) const { return distributed ? d : 1; }
};

// Reads and checks the options DataParallelOptimizerOptions() declares: overlap_param_gather
// given without distributed_optimizer is a located error.
DataParallelOptimizer ReadDataParallelOptimizer(OptionReader& opt);

// The bucket (index into `buckets`, in reduction order) holding layer i's parameters, for i in
// [0, layers): the first bucket that closed at or before i. A layer without parameters gets the
// bucket of the nearest one before it; -1 before the first layer with parameters.
std::vector<int> BucketOfLayer(const std::vector<GradientBucket>& buckets, int layers);

// Makes the first task of each rank r on `stream` among those added since `from` (ids from
// `from` to g.next_id()) also wait for dep_of[r], where that is >= 0. Later tasks of the stream
// follow it in stream order.
void AwaitFirstTasks(TaskGraph& g, TaskId from, int stream, const std::vector<TaskId>& dep_of);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_DISTRIBUTED_OPTIMIZER_H_
