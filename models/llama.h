// LLaMA-style decoder (Touvron et al. 2023, "LLaMA" and "Llama 2"; Dubey et al. 2024, "The
// Llama 3 Herd of Models"): pre-norm RMSNorm, SwiGLU MLP, rotary position embeddings,
// grouped-query attention with kv_heads key/value heads, no biases, no dropout, untied output
// projection.
#ifndef STRATASIM_MODELS_LLAMA_H_
#define STRATASIM_MODELS_LLAMA_H_

#include "core/scenario.h"
#include "models/transformer.h"
#include "models/workload.h"

namespace stratasim {

// SwiGLU width when the spec gives none: 2/3 of 4h rounded up to a multiple of 256, as the
// reference implementation does (llama/model.py, multiple_of = 256): 11008 for h = 4096.
int LlamaFfnHidden(const ModelSpec& spec);

// Makes a layer shape LLaMA-style (the header's list): kv_heads key/value heads, the SwiGLU
// width, RMSNorm, rotary positions, no dropout, no biases. Shared with MoE's architecture llama.
void MakeLlamaStyle(const ModelSpec& spec, TransformerLayerShape& x);

// Per micro-batch of `micro_batch` sequences, without recomputation.
Workload BuildLlama(const ModelSpec& spec, int micro_batch, DType dtype);

// l (h (h + 2 kv d) + h^2 + 3 h f + 2h) + 2 V h + h, with d = h / heads the head size, kv the
// key/value heads and f the SwiGLU width: attention, MLP and two RMSNorms per layer, the
// embedding and the untied output projection, the final RMSNorm.
double LlamaParameterCount(const ModelSpec& spec);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_LLAMA_H_
