// Tensor (intra-layer model) parallelism as Megatron-LM does it (Shoeybi et al. 2019,
// "Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism"),
// with optional sequence parallelism (Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models", §4.2.2), combined with data parallelism over the
// remaining GPUs.
//
// The t GPUs of a tensor group are consecutive ranks (so inside a server whenever t divides
// the server's GPU count). In each transformer layer the first GEMM of each block (QKV;
// MLP up, or LLaMA's gate/up) is column-parallel and the second (attention output projection;
// MLP down) row-parallel, and the attention heads are split t ways: FLOPs, bytes, weights and
// the activations of those ops divide by t (Megatron-LM §3, Figure 3). Each layer then runs
// two all-reduces of b*s*h elements in the forward pass (after each row-parallel GEMM, the
// "g" operator) and two in the backward pass (of the input gradient of each column-parallel
// GEMM, the "f" operator). They sit on the compute stream: the next kernel needs their result,
// so tensor-parallel communication is exposed (the asynchronous overlap of the backward
// all-reduce with the weight-gradient GEMM is not modelled).
//
// The embedding is vocabulary-parallel (its table split t ways, followed by an all-reduce of
// its b*s*h output, Megatron-LM §3); the output layer is column-parallel over the vocabulary
// (logits and cross-entropy /t) with an all-reduce of its input gradient in the backward; the
// small all-reduces of the vocabulary-parallel cross-entropy (b*s floats) are not modelled.
// Position embeddings and norm/bias parameters are counted as split too (they are replicated
// in Megatron-LM; < 1% of the parameters of the models studied).
//
// sequence_parallel: each all-reduce becomes a reduce-scatter (after a row-parallel GEMM, or
// of a column-parallel GEMM's input gradient) and an all-gather (before a column-parallel GEMM,
// or of the gradient before a row-parallel GEMM's backward), the same volume; norms, dropouts
// and residual adds run on s/t of the sequence, so their work and saved activations divide by
// t (a GPT layer keeps s b h (34/t + 5 a s/(h t)) bytes instead of s b h (10 + 24/t +
// 5 a s/(h t)), Korthikanti Table 2). The re-gather of the sequence-sharded GEMM inputs in the
// backward pass is not modelled.
//
// Options: TensorParallelOptions() (megatron.cpp) declares them; `stratasim strategies tensor`
// lists them.
//
// Data parallelism: ranks j, j+t, j+2t... hold the same shard and all-reduce its gradients in
// buckets during the last micro-batch's backward (overlapped, as DDP); with the distributed
// optimizer they reduce-scatter them instead, step on 1/d and all-gather the parameters
// (strategies/distributed_optimizer.h). tp_comm_overlap decomposes sequence parallelism's
// collectives with their GEMMs (strategies/tensor/tp_layer.h).
#ifndef STRATASIM_STRATEGIES_TENSOR_MEGATRON_H_
#define STRATASIM_STRATEGIES_TENSOR_MEGATRON_H_

#include "models/workload.h"
#include "strategies/plan.h"

namespace stratasim {

Plan PlanTensorParallel(const Scenario& s, const StrategySpec& spec);
const OptionSpecs& TensorParallelOptions();

// The workload of one GPU of a tensor group of `t` GPUs: `w` (built without recomputation)
// split as above, with the recomputation `model` asks for applied afterwards.
Workload TensorParallelShard(const Workload& w, int t, bool sequence_parallel,
                             const ModelSpec& model);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_TENSOR_MEGATRON_H_
