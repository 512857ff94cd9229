// Context parallelism (option `context` of kind 3d): the c GPUs of a context-parallel group
// hold the same parameters and split every sequence c ways (Megatron-Core's context
// parallelism, "Context parallelism overview" of its docs; the ring of Liu et al. 2023, "Ring
// Attention with Blockwise Transformers").
//
// Load balancing (Megatron-Core / Transformer Engine): the sequence is cut into 2c chunks and
// rank i of the group holds chunks i and 2c-1-i (the zig-zag split). Under a causal mask each
// step of the ring, the rank's queries against one block of keys, then keeps exactly half of
// the (s/c)^2 query-key pairs: against its own block by the mask inside its two chunks,
// against an earlier rank's block all its queries against that block's first chunk, against a
// later rank's block its second chunk's queries against all of it. Every rank and every step
// does the same work; without a mask any split does.
//
// What one GPU runs: every token-wise op (projections, MLP, norms, embedding, head, loss) on
// its s/c tokens; its attention core, s/c queries against all s keys, is 1/c of the full
// core; activations are 1/c; parameters are not split (replicated over the group, their
// gradients reduced over data x context). The core runs as a ring exchanging K/V blocks
// (strategies/tensor/context_ring.cpp, which documents what moves and when).
#ifndef STRATASIM_STRATEGIES_PIPELINE_CONTEXT_PARALLEL_H_
#define STRATASIM_STRATEGIES_PIPELINE_CONTEXT_PARALLEL_H_

#include <cstdint>

#include "core/strategy_options.h"
#include "models/workload.h"
#include "strategies/tensor/tp_layer.h"

namespace stratasim {

// Checks that context degree `c` can split `model`'s sequences: a transformer kind, with a
// sequence divisible by 2c (the zig-zag chunks); throws opt.Fail("context", rule) otherwise.
void CheckContextDegree(const ModelSpec& model, int c, const OptionReader& opt);

// The workload one GPU of a context-parallel group of `c` runs, for `plain` (whose
// recomputation is ignored: apply it after, as for BuildWorkload's). The token-wise ops are
// those of the model built on s/c tokens; the ops flagged attention_core are the full model's
// divided by c (their FLOPs, bytes and saved bytes, and the query rows m of their shapes);
// parameters and tokens per sample are the full model's.
Workload ContextParallelWorkload(const ModelSpec& plain, int micro_batch, DType dtype,
                                 std::uint64_t seed, int c);

// The ring of a tensor shard of `t` (its K/V block: K and V of b x s/c tokens of kv_heads / t
// heads), its streams left for the caller to set.
ContextRing ContextRingOf(const ModelSpec& model, int micro_batch, DType dtype, int c, int t);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PIPELINE_CONTEXT_PARALLEL_H_
