// GPT-style mixture-of-experts transformer (Lepikhin et al. 2021, "GShard"; Fedus et al. 2022,
// "Switch Transformers"): every layer's MLP is replaced by a gate and `experts` expert MLPs
// of the dense MLP's shape; each token goes to its top_k experts, and each expert takes at most
// capacity = ceil(capacity_factor * top_k * tokens / experts) tokens per micro-batch.
//
// The workload is what one GPU runs when it holds every expert (data parallelism): the gate,
// the dispatch permutation, all experts computing on their full capacity (padded slots are
// computed, as GShard's einsum formulation does) and the combine. Expert parallelism moves the
// dispatch and combine across GPUs; MoeAllToAllVolumes gives those volumes from a routing
// matrix for the strategies that do it.
#ifndef STRATASIM_MODELS_MOE_H_
#define STRATASIM_MODELS_MOE_H_

#include <vector>

#include "core/scenario.h"
#include "models/transformer.h"
#include "models/workload.h"

namespace stratasim {

// model.architecture (ModelSpec) chooses the dense design around the experts: "gpt" (the
// default) as above, or "llama" as Mixtral (Jiang et al. 2024, "Mixtral of Experts", Section 2
// and the released configuration): SwiGLU experts of width ffn_hidden, RMSNorm, rotary
// positions, grouped-query attention over kv_heads, no biases, no dropout, an untied output.

// The shape of one MoE layer of `spec` (its experts, norm, MLP and attention variants).
TransformerLayerShape MoeLayerShape(const ModelSpec& spec, int micro_batch, DType dtype);

// Per micro-batch of `micro_batch` sequences, without recomputation. Throws ConfigError for
// experts < 1, top_k outside [1, experts] or capacity_factor <= 0.
Workload BuildMoe(const ModelSpec& spec, int micro_batch, DType dtype);

// GPT style: embedding (V + s) h + final norm 2h + l (attention 4h^2 + 4h, norms 4h, gate h E,
// E experts of 8h^2 + 5h) for the default MLP width 4h. Llama style: 2 V h + h + l (attention
// h (h + 2 kv) + h^2, norms 2h, gate h E, E experts of 3 h f).
double MoeParameterCount(const ModelSpec& spec);

// Bytes of the two all-to-alls of one MoE layer under expert parallelism, as N x N row-major
// matrices like Collective::matrix ([src * N + dst], N ranks).
struct MoeAllToAll {
  std::vector<double> dispatch_bytes;  // tokens to their experts' ranks
  std::vector<double> combine_bytes;   // expert outputs back to the tokens' ranks
  double dropped_tokens = 0;           // over capacity, not sent (they skip the layer)
};

// `tokens[r][x]`: tokens of rank r's micro-batch routed to expert x (a token routed to k experts
// counts once in each). Experts are placed in contiguous blocks: expert x lives on rank
// x / experts_per_rank, so N = tokens.size() must equal experts / experts_per_rank. With
// `capacity` > 0 an expert accepts at most that many tokens, in rank order (a deterministic
// stand-in for GShard's position order); the rest are dropped. Each token carries `hidden`
// values of `dtype`. Throws stratasim::Error for a matrix of the wrong shape or negative counts.
MoeAllToAll MoeAllToAllVolumes(const std::vector<std::vector<double>>& tokens, int experts_per_rank,
                               double hidden, DType dtype, double capacity = 0);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_MOE_H_
