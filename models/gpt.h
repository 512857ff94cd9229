// GPT-style dense transformer (Radford et al. 2019; Brown et al. 2020): each layer broken into
// its kernels with FLOPs and bytes per micro-batch, parameters and activation memory.
//
// Assumptions: pre-LN decoder layers, MLP width 4h, learned position embeddings, the output
// projection tied to the token embedding (GPT-2), unfused attention (scores, softmax, dropout
// and the product with V as separate kernels whose bytes are counted; FlashAttention comes
// with the model zoo). FLOPs count a multiply-add as 2.
#ifndef STRATASIM_MODELS_GPT_H_
#define STRATASIM_MODELS_GPT_H_

#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/task_graph.h"

namespace stratasim {

// One kernel (or a fused group of elementwise kernels) of the forward pass and its backward.
struct OpCost {
  std::string name;
  OpKind kind = OpKind::kOther;
  double forward_flops = 0;
  double backward_flops = 0;  // input-gradient + weight-gradient
  double forward_bytes = 0;   // device-memory traffic
  double backward_bytes = 0;
};

// A unit whose gradients become ready together in the backward pass.
struct LayerCost {
  std::string name;
  std::vector<OpCost> ops;     // in forward order
  double params = 0;           // parameters owned (tied weights count once, at their owner)
  double activation_bytes = 0;  // kept from forward until this layer's backward
};

struct GptWorkload {
  std::vector<LayerCost> layers;  // embedding, transformer layers 0..l-1, head (final LN+logits)
  double params = 0;
  DType dtype = DType::kBF16;
  int micro_batch = 1;
  int sequence = 0;
};

// Per micro-batch of `micro_batch` sequences. Throws ConfigError (at spec.where) when the
// dimensions are not positive or heads do not divide hidden.
GptWorkload BuildGpt(const ModelSpec& spec, int micro_batch, DType dtype);

// P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)) + 2h (final layer norm): Narayanan et al. 2021,
// "Efficient Large-Scale Language Model Training on GPU Clusters", Appendix.
double GptParameterCount(const ModelSpec& spec);

// Model FLOPs of one training iteration of `batch` sequences without recomputation:
// 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) (Narayanan et al. 2021, eq. 3 with 3 passes not 4).
double GptTrainingFlops(const ModelSpec& spec, double batch);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_GPT_H_
