#include "strategies/gnn/feature_source.h"

#include <algorithm>
#include <utility>

namespace stratasim {

bool FeatureSource::IdSet::Contains(std::int64_t v) const {
  return bits.empty() ? std::binary_search(sorted.begin(), sorted.end(), v)
                      : static_cast<bool>(bits[static_cast<size_t>(v)]);
}

FeatureSource::IdSet FeatureSource::MakeSet(std::vector<std::int64_t> ids, std::int64_t vertices) {
  IdSet set;
  std::sort(ids.begin(), ids.end());
  if (vertices <= kBitmapVertices) {
    set.bits.assign(static_cast<size_t>(vertices), false);
    for (std::int64_t v : ids) set.bits[static_cast<size_t>(v)] = true;
  }
  set.sorted = std::move(ids);
  return set;
}

FeatureSource FeatureSource::NoCache() { return FeatureSource(); }

FeatureSource FeatureSource::StaticCache(std::shared_ptr<const std::vector<std::int64_t>> cached,
                                         std::int64_t vertices) {
  FeatureSource f;
  f.kind_ = Kind::kStatic;
  f.vertices_ = vertices;
  f.cached_ = std::make_shared<const IdSet>(MakeSet(*cached, vertices));
  return f;
}

FeatureSource FeatureSource::BatchReuse(int levels, std::int64_t vertices) {
  FeatureSource f;
  f.kind_ = Kind::kReuse;
  f.levels_ = levels;
  f.vertices_ = vertices;
  return f;
}

std::vector<std::int64_t> FeatureSource::KeptVertices() const {
  std::vector<std::int64_t> n;
  for (const IdSet& k : kept_) n.push_back(static_cast<std::int64_t>(k.sorted.size()));
  return n;
}

FeatureLookup FeatureSource::Next(const std::vector<std::int64_t>& ids) {
  FeatureLookup f;
  f.vertices = static_cast<std::int64_t>(ids.size());
  switch (kind_) {
    case Kind::kNone:
      break;
    case Kind::kStatic:
      for (std::int64_t v : ids) f.hits += cached_->Contains(v);
      break;
    case Kind::kReuse: {
      // Level 1 searches the whole batch in batch t-1's sorted ids; level 2 searches level 1's
      // misses in batch t-2's, as a second pass of the same kernel (kernels/batch_reuse.h: one
      // binary search per query; kernels/batch_reuse_ref.h is its reference, against which
      // strategies/gnn/feature_source_test.cpp checks these counts).
      std::vector<std::int64_t> query = ids;
      for (const IdSet& kept : kept_) {
        f.searched.push_back(static_cast<std::int64_t>(kept.sorted.size()));
        f.queries.push_back(static_cast<std::int64_t>(query.size()));
        std::vector<std::int64_t> missed;
        for (std::int64_t v : query) {
          if (!kept.Contains(v)) missed.push_back(v);
        }
        const auto found = static_cast<std::int64_t>(query.size() - missed.size());
        f.level_hits.push_back(found);
        f.hits += found;
        query = std::move(missed);
      }
      kept_.insert(kept_.begin(), MakeSet(ids, vertices_));
      if (static_cast<int>(kept_.size()) > levels_) kept_.pop_back();
      break;
    }
  }
  f.misses = f.vertices - f.hits;
  return f;
}

}  // namespace stratasim
