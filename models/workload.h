// The workload of one model, as every strategy sees it: layers of kernels with their FLOPs,
// bytes, matrix shapes, parameters and saved activations, for one micro-batch on one GPU.
//
// A model family builds a Workload from a ModelSpec (models/gpt.h, bert.h, llama.h, moe.h,
// cnn.h, graphsage.h); BuildWorkload dispatches on ModelSpec::kind and applies the
// recomputation choice (models/recompute.h). FLOPs count a multiply-add as 2. Elementwise
// kernels (norms, activations, dropout, residual adds) are costed by the bytes they move and
// carry no FLOPs, as the published FLOP formulas count only matrix products.
#ifndef STRATASIM_MODELS_WORKLOAD_H_
#define STRATASIM_MODELS_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/task_graph.h"

namespace stratasim {

// The work of one kernel launch.
struct KernelCost {
  double flops = 0;
  double bytes = 0;  // device-memory traffic
  GemmShape gemm;    // set for matrix products
  // The format the kernel computes in when it is not the workload's (FP8 GEMMs, models/fp8.h);
  // unset: the emitter's dtype (the workload's, StorageDType of the training precision).
  std::optional<DType> dtype;
  // A fused attention kernel (OpKind::kFusedAttention) with a causal mask; copied to Task::causal.
  bool causal = false;

  bool empty() const { return flops <= 0 && bytes <= 0; }
};

// One kernel (or a fused group of elementwise kernels) of the forward pass and its backward.
struct OpCost {
  std::string name;
  OpKind kind = OpKind::kOther;
  KernelCost forward;
  // Gradient with respect to the op's inputs (all of a weightless op's backward).
  KernelCost backward_input;
  // Gradient with respect to its weights; empty for ops without weights.
  KernelCost backward_weight;
  // Activation bytes this op keeps from its forward for its backward (each tensor counted at
  // the op that saves it first, so a layer's sum is what it holds).
  double saved_bytes = 0;
  // Part of the attention core (scores, softmax, dropout, product with V; or the one fused
  // kernel): selective recomputation drops its saved bytes and re-runs it (Korthikanti et al.
  // 2022, §4.2).
  bool attention_core = false;
  // Set by ApplyRecompute: the forward runs again just before the layer's backward.
  bool recomputed = false;
  // An FP8 cast kernel of the GEMM of that name in the same layer (models/fp8.h).
  std::string fp8_cast_of;

  double BackwardFlops() const { return backward_input.flops + backward_weight.flops; }
};

// A unit whose gradients become ready together in the backward pass.
struct LayerCost {
  std::string name;
  std::vector<OpCost> ops;  // in forward order
  double params = 0;        // parameters owned (tied weights count once, at their owner)
  // The layer's input activation: all that full recomputation keeps.
  double input_bytes = 0;
  // Whether recomputation applies (transformer layers, CNN blocks; not embeddings or heads,
  // as in Megatron-LM).
  bool recomputable = false;
  // Set by ApplyRecompute: bytes kept from forward until this layer's backward, and bytes the
  // recomputation re-creates just before it (freed with the rest after the backward).
  double activation_bytes = 0;
  double recomputed_bytes = 0;

  double ForwardFlops() const;
  double BackwardFlops() const;
  double RecomputeFlops() const;  // forward FLOPs of the ops re-run
};

// A token embedding whose gradient is sparse (ModelSpec::sparse_embedding; docs/models.md,
// "Sparse embedding"): per iteration only the rows of the batch's distinct token ids are
// non-zero (models/token_distribution.h draws them).
struct SparseEmbedding {
  int layer = -1;         // index in Workload::layers of the layer that owns the table
  double rows = 0;        // the vocabulary
  double row_params = 0;  // parameters per row: the hidden width
};

struct Workload {
  std::string kind;  // ModelSpec::kind
  // Set for models with a sparse embedding; its table's rows x row_params are part of
  // layers[layer].params, which dense strategies all-reduce whole.
  std::optional<SparseEmbedding> sparse_embedding;
  std::vector<LayerCost> layers;  // in forward order
  double params = 0;
  DType dtype = DType::kBF16;  // of activations and elementwise kernels (BF16 in FP8 training)
  bool fp8 = false;            // FP8 training: the linear GEMMs run in FP8 (models/fp8.h)
  int micro_batch = 1;
  double tokens_per_sample = 0;  // sequence length for language models; 0 for CNNs and GNNs
  double input_bytes = 0;        // per micro-batch, loaded from the host (tokens, images, features)
  Recompute recompute = Recompute::kNone;

  double ForwardFlops() const;
  double BackwardFlops() const;
  double RecomputeFlops() const;
  // Activation bytes one micro-batch keeps from its forward pass to its backward pass.
  double ActivationBytes() const;
};

// Builds `spec` for micro-batches of `micro_batch` samples in `dtype`, with the recomputation
// `spec` asks for. dtype kFP8 is FP8 training: a BF16 workload whose linear GEMMs run in FP8
// (models/fp8.h); transformer kinds only. `seed` drives the randomness of workloads that have some
// (GraphSAGE's neighbour sampling: mini-batch `batch_index`). Throws ConfigError at spec.where for
// dimensions a model cannot have.
Workload BuildWorkload(const ModelSpec& spec, int micro_batch, DType dtype, std::uint64_t seed = 0,
                       int batch_index = 0);

// For model builders: sums the layers' parameters and sets the activations each layer keeps
// without recomputation.
void FinalizeWorkload(Workload& w);

// Parameter count of `spec` (for reports).
double ModelParameterCount(const ModelSpec& spec);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_WORKLOAD_H_
