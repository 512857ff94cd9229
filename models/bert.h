// BERT (Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers for Language
// Understanding"): a bidirectional encoder pre-trained with masked-language modelling.
//
// Assumptions: post-LN layers (norm after each residual add, as the original), GeLU MLP of width
// 4h, learned positions and two token types, dropout; the MLM head (dense + GeLU + LayerNorm,
// then logits tied to the token embedding, with their own bias) runs on every position, as
// Megatron-LM's BERT does (the loss then keeps the ~15% masked ones). The pooler and the
// next-sentence head (h^2 + 3h + 2 parameters, negligible work) are left out.
#ifndef STRATASIM_MODELS_BERT_H_
#define STRATASIM_MODELS_BERT_H_

#include "core/scenario.h"
#include "models/workload.h"

namespace stratasim {

// Per micro-batch of `micro_batch` sequences, without recomputation.
Workload BuildBert(const ModelSpec& spec, int micro_batch, DType dtype);

// (V + s + 2) h + 2h   embeddings and their LayerNorm
// + l (12 h^2 + 13 h)   encoder layers
// + h^2 + 3h + V        MLM head: dense, LayerNorm, logits bias (the weights are tied)
double BertParameterCount(const ModelSpec& spec);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_BERT_H_
