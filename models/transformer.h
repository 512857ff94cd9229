// The transformer layer every language model here is made of, broken into its kernels, with
// the variants the families differ by: pre- or post-norm, LayerNorm or RMSNorm, GeLU MLP or
// SwiGLU, multi-head or grouped-query attention, rotary embeddings, dropout, and a
// mixture-of-experts MLP.
//
// Saved activations follow Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", §4.1: with 16-bit values and 1-byte dropout masks a GPT layer with
// unfused attention keeps s b h (34 + 5 a s / h) bytes; here each tensor is counted at the op
// that saves it, so the sum over a layer's ops is that formula for GPT and its analogue for the
// other variants. With flash attention (the default) the 5 a s^2 b term becomes the FP32
// logsumexp, 4 a s b bytes (models/attention.h).
#ifndef STRATASIM_MODELS_TRANSFORMER_H_
#define STRATASIM_MODELS_TRANSFORMER_H_

#include <string>

#include "models/workload.h"

namespace stratasim {

struct TransformerLayerShape {
  double micro_batch = 1;
  double sequence = 0;
  double hidden = 0;
  double heads = 0;
  double kv_heads = 0;  // = heads for multi-head attention
  double ffn_hidden = 0;
  double bytes_per_element = 2;
  bool post_norm = false;  // BERT: norm after each residual add; GPT, LLaMA: before each block
  bool rms_norm = false;   // LLaMA: no mean subtraction, no bias
  bool swiglu = false;     // LLaMA: gate and up projections of width ffn_hidden, then SiLU-gating
  bool rotary = false;     // LLaMA: rotary position embedding applied to Q and K
  bool dropout = true;     // GPT and BERT train with dropout; LLaMA does not
  bool bias = true;        // GPT and BERT linear layers have biases; LLaMA's have none
  // The attention core as one fused kernel (models/attention.h), and its mask.
  Attention attention = Attention::kFlash;
  bool causal = true;  // decoders; BERT attends both ways
  // Mixture of experts (experts > 0): the MLP becomes a gate and `experts` expert MLPs (SwiGLU
  // ones when `swiglu`), each taking at most capacity = ceil(capacity_factor * top_k * tokens /
  // experts) tokens.
  double experts = 0;
  double top_k = 1;
  double capacity_factor = 1;
};

// One layer; its ops are named "<name>/<op>" by the task emitter.
LayerCost TransformerLayer(const std::string& name, const TransformerLayerShape& shape);

// Parameters of one layer of that shape (weights and biases; RMSNorm has no bias, LLaMA's
// linear layers have none).
double TransformerLayerParams(const TransformerLayerShape& shape);

// Tokens each expert processes per micro-batch (GShard's capacity, Lepikhin et al. 2021).
double ExpertCapacity(const TransformerLayerShape& shape);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_TRANSFORMER_H_
