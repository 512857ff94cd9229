// Where a sampled mini-batch's input features come from on one GPU (docs/gnn.md): all from the
// host (no cache), from a static cache of the highest-degree vertices (PaGraph, SoCC 2020), or
// from the batches before it kept on the GPU (BRGraph, CCPE 2022: batch reuse, one or two
// levels). Lookup sees the batches of one GPU in the order it trains on them; the counts it
// returns decide the bytes each task of strategies/gnn/gnn_training.cpp moves.
#ifndef STRATASIM_STRATEGIES_GNN_FEATURE_SOURCE_H_
#define STRATASIM_STRATEGIES_GNN_FEATURE_SOURCE_H_

#include <cstdint>
#include <memory>
#include <vector>

namespace stratasim {

struct FeatureLookup {
  std::int64_t vertices = 0;  // input vertices of the batch
  std::int64_t hits = 0;      // found on the GPU (all levels)
  std::int64_t misses = 0;    // vertices - hits: copied host-to-device
  // Batch reuse: the kept batches searched (their vertex counts), and how many vertices were
  // looked up in each (the second level searches the first level's misses). Empty otherwise.
  std::vector<std::int64_t> searched;
  std::vector<std::int64_t> queries;
  std::vector<std::int64_t> level_hits;
};

class FeatureSource {
 public:
  static FeatureSource NoCache();
  // `cached`: the cached vertex ids, sorted (shared by every GPU: the same cache on each).
  static FeatureSource StaticCache(std::shared_ptr<const std::vector<std::int64_t>> cached);
  // BRGraph with 1 or 2 levels: the last `levels` batches stay on the GPU.
  static FeatureSource BatchReuse(int levels);

  // The next batch's distinct vertex ids; counts the hits with the kernel's semantics
  // (kernels/batch_reuse_ref.h for batch reuse), then keeps the batch when reusing.
  FeatureLookup Next(const std::vector<std::int64_t>& ids);

  // Vertex counts of the kept batches, most recent first (batch reuse).
  std::vector<std::int64_t> KeptVertices() const;

 private:
  enum class Kind { kNone, kStatic, kReuse };
  Kind kind_ = Kind::kNone;
  int levels_ = 0;
  std::shared_ptr<const std::vector<std::int64_t>> cached_;
  std::vector<std::vector<std::int64_t>> kept_;  // most recent first
};

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_GNN_FEATURE_SOURCE_H_
