// Sampled mini-batches shared by the GNN strategies of one run: every kind of a scenario trains
// on the same batches (same seed, same indices), and sampling an ogbn-products-sized batch
// (half a million vertices) costs a tenth of a second, so each is sampled once per process.
// Bounded: past kMaxCachedBatchBytes of vertex ids the oldest batches are dropped (and sampled
// again if asked for: the result is the same, as sampling is seeded).
#ifndef STRATASIM_STRATEGIES_GNN_BATCH_CACHE_H_
#define STRATASIM_STRATEGIES_GNN_BATCH_CACHE_H_

#include <cstdint>
#include <memory>

#include "core/scenario.h"
#include "models/graphsage.h"

namespace stratasim {

inline constexpr double kMaxCachedBatchBytes = 512.0 * 1024 * 1024;

// SampleGraphBatch(spec, batch, seed, index), from the cache when it was sampled before.
std::shared_ptr<const GraphBatch> CachedGraphBatch(const ModelSpec& spec, int batch,
                                                   std::uint64_t seed, int index);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_GNN_BATCH_CACHE_H_
