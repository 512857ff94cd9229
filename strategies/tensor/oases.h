// Oases (Li et al., "Automated Tensor Model Parallelism with Overlapped Communication for
// Efficient Foundation Model Training", TPDS 2025, arXiv 2305.16121; code lucasleesw/oases):
// tensor parallelism whose all-reduces are hidden behind compute, as a task graph.
//
//   sub-batches      each micro-batch runs as two sub-batches (split along the batch). Per
//                    sub-layer (attention, MLP) the kernels of sub-batch 1 run, then its output
//                    all-reduce starts on a communication stream ("tp_subpipe") while sub-batch 2
//                    computes the same sub-layer; the next sub-layer of sub-batch 1 waits for
//                    that all-reduce (one outstanding handle per stream, as the Oases code).
//                    Consecutive layers continue (the last all-reduce of sub-batch 2 overlaps
//                    the next layer's sub-batch 1). The sub-batch machinery is Merak's
//                    (TensorLayerEmitter::SubPipeline level 3, strategies/tensor/tp_layer.h).
//   recompute        communication-free recomputation: the forward keeps each sub-layer's input
//                    and the all-reduced output of its row-parallel GEMM, so the backward's
//                    recomputation re-runs local kernels only: 4 tensor-parallel all-reduces per
//                    layer instead of Megatron's 6 with full recomputation.
//   cross-pass       in the backward, the input-gradient all-reduce of one sub-batch overlaps the
//                    other sub-batch's backward and the recomputation of the sub-layer before
//                    (which needs no communication).
//   re-sharding      adjacent sub-layers may use different tensor degrees (the cutpoint options:
//                    the first `cutpoint` layers at `first_tensor`, the rest at `tensor`). Where
//                    the degree grows from t to T, the T/t ranks at the same position of the
//                    T/t t-groups that make one T-group (the "trans group") all-gather their
//                    sub-batches' activations in the forward; the backward takes its slice of
//                    the replicated gradient (no communication). Where it shrinks, the forward
//                    slices and the backward all-gathers the gradient. Each run of sub-layers at
//                    one degree is data parallel over its own groups (ranks j, j+t, ...), with
//                    one coalesced gradient all-reduce per run after the backward (Oases code).
//   SM interference  NCCL kernels take SMs from the compute kernels they overlap: each compute
//                    kernel the schedule runs beside a sub-batch's all-reduce is followed by a
//                    task of `sm_interference` times its work (category "sm_interference",
//                    Phase::kOther so that it counts no model FLOPs). Default 0.189: the mean
//                    slowdown of compute overlapped with communication measured by Lee et al.
//                    2025 ("Characterizing Compute-Communication Overlap in GPU-Accelerated
//                    Distributed Deep Learning", arXiv 2507.03114; A100/H100/MI250/MI210, max
//                    0.40); a calibration file's `sm_interference` for the GPU kind replaces it.
//
// Options: OasesOptions() (oases.cpp); `stratasim strategies oases` lists them.
#ifndef STRATASIM_STRATEGIES_TENSOR_OASES_H_
#define STRATASIM_STRATEGIES_TENSOR_OASES_H_

#include <string>
#include <vector>

#include "strategies/plan.h"

namespace stratasim {

// Lee et al. 2025 (above): mean computational slowdown of kernels overlapped with collectives.
inline constexpr double kDefaultSmInterference = 0.189;

// What LowerOases builds: the planner's decision variables.
struct OasesShape {
  // Tensor-parallel degree of each sub-layer in forward order: the attention half then the MLP
  // half of each transformer layer (2 x layers entries). Each must divide the GPU count and the
  // model's heads, adjacent degrees must divide one another, and the largest degree fixes the
  // micro-batch (training.micro_batch samples per micro-batch at the largest degree; a run at
  // degree t has micro-batches of micro_batch x t / t_max samples, at least 2 and even). The
  // embedding runs at the first sub-layer's degree, the head at the last's.
  std::vector<int> sublayer_tensor;
  // Communication-free recomputation of every transformer sub-layer.
  bool recompute = false;
  // Extra work of a compute kernel overlapped with an all-reduce, as a fraction of its own;
  // negative: OasesSmInterference(s).
  double sm_interference = -1;
};

// The shape of the cutpoint options: `first_tensor` for the first `cutpoint` layers, `tensor`
// for the rest (2 x layers entries).
OasesShape OasesCutpointShape(int layers, int first_tensor, int tensor, int cutpoint,
                              bool recompute);

// The calibration's sm_interference for the cluster's first GPU kind, else
// kDefaultSmInterference.
double OasesSmInterference(const Scenario& s);

// Why `shape` cannot be lowered on s (the sub-layer and the rule broken); empty when it can.
std::string OasesShapeError(const Scenario& s, const OasesShape& shape);

// Lowers `shape` to a plan over all of s's GPUs. Throws stratasim::Error with OasesShapeError's
// text when the shape is invalid; PlanOases turns its options into a shape and locates its errors
// itself.
Plan LowerOases(const Scenario& s, const OasesShape& shape);

// The `oases` strategy kind.
Plan PlanOases(const Scenario& s, const StrategySpec& spec);
const OptionSpecs& OasesOptions();

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_TENSOR_OASES_H_
