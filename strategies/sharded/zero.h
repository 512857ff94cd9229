// Sharded data parallelism: ZeRO stages 1-3 (Rajbhandari et al. 2020, "ZeRO: Memory
// Optimizations Toward Training Trillion Parameter Models", SC'20) and PyTorch FSDP (Zhao et
// al. 2023, "PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel", VLDB), with
// FSDP's hybrid sharding (shard inside a server, replicate across servers).
//
// Kinds (StrategySpec::kind):
//   zero1  optimizer states sharded over the shard group (ZeRO §5.1, P_os). During the last
//          micro-batch's backward, gradient buckets are reduce-scattered (each rank keeps the
//          sum of its shard); the Adam step updates the shard; the updated 16-bit weights are
//          all-gathered per bucket. Reduce-scatter + all-gather move what DDP's all-reduce
//          moves (ZeRO §7.2.1: "same communication volume as baseline data parallelism").
//   zero2  also the gradients sharded (P_os+g): buckets are reduce-scattered during the backward
//          of every micro-batch (as DeepSpeed does under gradient accumulation, so that no rank
//          holds a full gradient), then step and all-gather as zero1.
//   zero3  also the weights sharded (P_os+g+p; FSDP FULL_SHARD): a unit's weights are
//          all-gathered before its forward and again before its backward and freed after each
//          use; its gradients are reduce-scattered right after its backward, every
//          micro-batch. Per iteration and micro-batch: 3 Psi moved vs DDP's 2 Psi (ZeRO §7.2.2).
//
// Options: ZeroOptions(stage) (zero.cpp) declares them; `stratasim strategies zero3` lists them.
//
// Streams: "compute", "comm" (all-gathers, and zero1/zero2 reduce-scatters) and, for zero3,
// "comm_rs" (reduce-scatters; FSDP runs them on their own stream).
//
// Memory per GPU (ZeRO Figure 1, with N the shard group size and Adam's K = 12): zero1
// 2 Psi + 2 Psi + 12 Psi / N, zero2 2 Psi + (2 + 12) Psi / N, zero3 (2 + 2 + 12) Psi / N; zero3
// adds the gathered weights of the units in use ("gathered_weights": allocated before each
// all-gather, freed after the unit's forward or backward) and the unit's full gradient from
// its backward until its reduce-scatter ends ("gradients"). Bucket and fragment buffers are
// not modelled. Activations as DDP.
#ifndef STRATASIM_STRATEGIES_SHARDED_ZERO_H_
#define STRATASIM_STRATEGIES_SHARDED_ZERO_H_

#include "strategies/plan.h"

namespace stratasim {

Plan PlanZero(const Scenario& s, const StrategySpec& spec);
// The options of kind zero<stage>, stage 1, 2 or 3.
const OptionSpecs& ZeroOptions(int stage);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_SHARDED_ZERO_H_
