// Closed forms of per-GPU memory: model states with mixed-precision Adam under any sharding
// of weights, gradients and optimizer states (the ZeRO stages), transformer-layer activations
// under each recomputation choice, and communication buffers.
#ifndef STRATASIM_MODELS_MEMORY_H_
#define STRATASIM_MODELS_MEMORY_H_

#include "core/dtype.h"
#include "core/scenario.h"
#include "models/workload.h"

namespace stratasim {

// Over how many GPUs each part of the model states is partitioned: ZeRO-1 shards the
// optimizer states, ZeRO-2 also the gradients, ZeRO-3 also the weights (Rajbhandari et al.
// 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", §5).
struct StateSharding {
  int weights = 1;
  int gradients = 1;
  int optimizer = 1;
};

struct ModelStateBytes {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;  // FP32 master weights (16-bit training) and Adam's two moments

  double Total() const { return weights + gradients + optimizer; }
};

// Adam with mixed precision (ZeRO §3.1): 16-bit weights and gradients (2 + 2 bytes per
// parameter) and FP32 master weights, momentum and variance (4 + 4 + 4): 16 bytes in all. In
// FP32/TF32 training the weights are their own master copy: 4 + 4 + 8. FP8 training keeps BF16
// weights and gradients and the FP32 optimizer states, and adds the FP8 copy of the weights
// that the GEMMs read (1 byte; Transformer Engine keeps it between the steps, as its
// Float8Tensor weight cache, and rebuilds it after each step): 2 + 1 + 2 + 12 = 17 bytes,
// the FP8 copy counted with the weights. INT8 training keeps 16-bit weights and gradients (its
// low-precision copies are transient).
// `grad_bytes_per_param` > 0 replaces the gradients' bytes per parameter: 4 for Megatron's FP32
// main gradients (DistributedDataParallelConfig.grad_reduce_in_fp32), which make 2 + 4 + 12 =
// 18 bytes per parameter, or 6 + 12/d with the distributed optimizer (optimizer states sharded
// d ways; Megatron-LM docs, "Distributed Optimizer").
ModelStateBytes AdamStateBytes(double params, DType precision, StateSharding sharding = {},
                               double grad_bytes_per_param = 0);

// Bytes per parameter of the training copy of the weights (and of the gradients).
double TrainingBytesPerParam(DType precision);

// Activation bytes of one GPT layer with 16-bit activations (Korthikanti et al. 2022, Table 2
// with no tensor or sequence parallelism): none s b h (34 + 5 a s / h), selective 34 s b h,
// full 2 s b h (only the layer input).
double GptLayerActivationBytes(double sequence, double micro_batch, double hidden, double heads,
                               Recompute recompute);

// Peak activation bytes of `in_flight` micro-batches whose forward passes are done and whose
// backward passes are not (1 for DDP, up to the pipeline depth for 1F1B), plus the largest
// layer's re-created activations during a recomputed backward.
double PeakActivationBytes(const Workload& w, int in_flight);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_MEMORY_H_
