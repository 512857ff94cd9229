// The plan space of a search (docs/search.md): every combination of the search section's
// lists, in a fixed order, and the rules that prune a combination before anything is simulated.
#ifndef STRATASIM_SEARCH_SPACE_H_
#define STRATASIM_SEARCH_SPACE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/scenario.h"
#include "search/candidate.h"
#include "search/search_spec.h"

namespace stratasim::search {

// Every combination, tensor outermost, then pipeline, micro_batch, schedule, virtual_stages,
// recompute, sequence_parallel, zero, rank_order. Structural rules only (options that do not
// exist for a combination are not varied): sequence_parallel only with t > 1 (false otherwise);
// schedule only with p > 1 ("" otherwise), virtual_stages only with interleaved (1 otherwise);
// zero1/zero2/zero3 only with t = p = 1, distributed_optimizer only with t x p > 1; rank_order
// only with more than one of t, p, d above 1 ("tpd" otherwise). `data` and `micro_batches` are
// derived (0 when not an integer). Divisibility and memory are left to Prune.
std::vector<Candidate> Enumerate(const Scenario& s, const SearchSpec& spec);

// Why a candidate is dropped before simulation.
enum class PruneReason {
  kGpus,        // t x p does not divide the GPUs
  kBatch,       // micro_batch x data does not divide the global batch
  kHeads,       // t does not divide the attention (or key/value) heads
  kLayers,      // fewer repeated layers than p x v stage chunks
  kInterleave,  // interleaved: m not a multiple of p (Megatron-LM's rule)
  kTensorSpan,  // a tensor group larger than a server (its all-reduces would cross the NICs)
  kDuplicate,   // the same plan as another one (e.g. distributed optimizer with d = 1)
  kMemory,      // the memory model's peak exceeds memory_fraction of the smallest GPU
};
// A short label for counts: "indivisible GPUs", "indivisible batch", "indivisible heads", "too
// few layers", "interleave", "tensor group spans servers", "duplicate", "out of memory".
std::string_view Label(PruneReason r);

// The closed-form per-GPU peak memory of a candidate: the largest over its stages of the model
// states (models/memory.h AdamStateBytes of the stage's parameters / t, sharded as c.zero says)
// plus the activations its schedule holds at once (1F1B: p - s micro-batches on stage s,
// interleaved Megatron-LM's count, GPipe all m) plus recomputation's extra.
struct MemoryEstimate {
  double peak_bytes = 0;
  double states_bytes = 0;       // of the stage with the peak
  double activations_bytes = 0;  // of the stage with the peak
  int stage = 0;
};
MemoryEstimate EstimateMemory(const Scenario& s, const Candidate& c);

// The first rule `c` breaks, in the order of PruneReason (memory last), or nothing.
std::optional<PruneReason> Prune(const Scenario& s, const SearchSpec& spec, const Candidate& c);

}  // namespace stratasim::search

#endif  // STRATASIM_SEARCH_SPACE_H_
