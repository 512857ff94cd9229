// GPT-style dense decoder (Radford et al. 2019; Brown et al. 2020) and the language-model
// pieces the other transformer families share: token embedding and the output logits.
//
// Assumptions: pre-LN layers, MLP width 4h (unless ffn_hidden says otherwise), learned position
// embeddings, the output projection tied to the token embedding (GPT-2), dropout, causal
// attention run as one fused FlashAttention kernel unless `attention: unfused` asks for the
// separate scores, softmax, dropout and product-with-V kernels (models/attention.h).
#ifndef STRATASIM_MODELS_GPT_H_
#define STRATASIM_MODELS_GPT_H_

#include "core/scenario.h"
#include "models/transformer.h"
#include "models/workload.h"

namespace stratasim {

using GptWorkload = Workload;  // the name before the generic workload existed

// Per micro-batch of `micro_batch` sequences, without recomputation (BuildWorkload applies it).
// With spec.sparse_embedding the head is untied (its own V x h projection) and the workload
// says which layer owns the sparse token table (Workload::sparse_embedding).
// Throws ConfigError (at spec.where) when the dimensions are not positive or heads do not
// divide hidden.
Workload BuildGpt(const ModelSpec& spec, int micro_batch, DType dtype);

// P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)) + 2h (final layer norm): Narayanan et al. 2021,
// "Efficient Large-Scale Language Model Training on GPU Clusters", Appendix (their formula
// leaves out the final norm's 2h), plus V h for the untied head of a sparse embedding.
double GptParameterCount(const ModelSpec& spec);

// Model FLOPs of one training iteration of `batch` sequences (Narayanan et al. 2021, §5.1):
//   none:      72 B s l h^2 (1 + s/(6h) + V/(12 l h))   forward + backward (3 passes)
//   full:      96 B s l h^2 (1 + s/(6h) + V/(16 l h))   their eq. 3: each layer's forward again
//   selective: 72 B s l h^2 (1 + 2s/(9h) + V/(12 l h))  the attention core's 4 B s^2 h again
// The V term is the same 6 B s h V FLOPs of the logits (forward and backward, never
// recomputed) in all three, written over a different prefactor.
// These are model FLOPs, the convention MFU is quoted in: the s/(6h) term counts the full
// s x s products, 4 B s^2 h per layer forward and 8 B s^2 h backward, whatever the kernels run.
// With flash attention the workload's FLOPs differ (models/attention.h): a causal kernel runs
// half of them, and its backward recomputes the scores (10 B s^2 h, not 8, when not causal);
// the metrics count a fused kernel's model FLOPs from its shape (core/metrics.cpp), so MFU still
// equals this formula over the iteration time.
double GptTrainingFlops(const ModelSpec& spec, double batch,
                        Recompute recompute = Recompute::kNone);

// Shared by the language models: the token-embedding lookup (plus learned positions when
// `positions` > 0) and the final norm, logits and softmax cross-entropy over `vocabulary`.
// The head's logits GEMM has a weight gradient but owns no parameters when `tied` (the
// embedding owns the table).
LayerCost EmbeddingLayer(double tokens, double hidden, double vocabulary, double positions,
                         double e, bool dropout);
LayerCost LmHeadLayer(const std::string& name, double tokens, double hidden, double vocabulary,
                      double e, bool tied, bool rms_norm);

// The transformer-layer shape of a GPT (or GPT-style MoE) spec.
TransformerLayerShape GptLayerShape(const ModelSpec& spec, int micro_batch, DType dtype);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_GPT_H_
