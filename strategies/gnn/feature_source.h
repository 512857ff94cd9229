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

// 2^27 bits = 16 MiB per bitmap at most.
inline constexpr std::int64_t kBitmapVertices = std::int64_t{1} << 27;

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
  // `vertices`: the graph's vertex count. Membership is tested in a bitmap over them while
  // that is small (kBitmapVertices), else by binary search in sorted ids: the same answers, the
  // bitmap without a cache miss per probe.
  static FeatureSource NoCache();
  // `cached`: the cached vertex ids, sorted (shared by every GPU: the same cache on each).
  static FeatureSource StaticCache(std::shared_ptr<const std::vector<std::int64_t>> cached,
                                   std::int64_t vertices);
  // BRGraph with 1 or 2 levels: the last `levels` batches stay on the GPU.
  static FeatureSource BatchReuse(int levels, std::int64_t vertices);

  // The next batch's distinct vertex ids; counts the hits with the kernel's semantics
  // (kernels/batch_reuse.h for batch reuse: a binary search of the kept batch's sorted ids),
  // then keeps the batch when reusing.
  FeatureLookup Next(const std::vector<std::int64_t>& ids);

  // Vertex counts of the kept batches, most recent first (batch reuse).
  std::vector<std::int64_t> KeptVertices() const;

 private:
  // A set of vertex ids: sorted, and as a bitmap when the graph is small enough.
  struct IdSet {
    std::vector<std::int64_t> sorted;
    std::vector<bool> bits;
    bool Contains(std::int64_t v) const;
  };
  static IdSet MakeSet(std::vector<std::int64_t> ids, std::int64_t vertices);

  enum class Kind { kNone, kStatic, kReuse };
  Kind kind_ = Kind::kNone;
  int levels_ = 0;
  std::int64_t vertices_ = 0;
  std::shared_ptr<const IdSet> cached_;
  std::vector<IdSet> kept_;  // most recent first
};

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_GNN_FEATURE_SOURCE_H_
