#include "strategies/gnn/feature_source.h"

#include <algorithm>
#include <utility>

#include "kernels/batch_reuse_ref.h"

namespace stratasim {

FeatureSource FeatureSource::NoCache() { return FeatureSource(); }

FeatureSource FeatureSource::StaticCache(std::shared_ptr<const std::vector<std::int64_t>> cached) {
  FeatureSource f;
  f.kind_ = Kind::kStatic;
  f.cached_ = std::move(cached);
  return f;
}

FeatureSource FeatureSource::BatchReuse(int levels) {
  FeatureSource f;
  f.kind_ = Kind::kReuse;
  f.levels_ = levels;
  return f;
}

std::vector<std::int64_t> FeatureSource::KeptVertices() const {
  std::vector<std::int64_t> n;
  for (const auto& k : kept_) n.push_back(static_cast<std::int64_t>(k.size()));
  return n;
}

FeatureLookup FeatureSource::Next(const std::vector<std::int64_t>& ids) {
  FeatureLookup f;
  f.vertices = static_cast<std::int64_t>(ids.size());
  switch (kind_) {
    case Kind::kNone:
      break;
    case Kind::kStatic:
      for (std::int64_t v : ids) {
        f.hits += std::binary_search(cached_->begin(), cached_->end(), v);
      }
      break;
    case Kind::kReuse: {
      // Level 1 searches the whole batch in batch t-1; level 2 searches level 1's misses in
      // batch t-2, as a second pass of the same kernel.
      std::vector<std::int64_t> query = ids;
      for (const std::vector<std::int64_t>& kept : kept_) {
        const kernels::batch_reuse::Reuse r = kernels::batch_reuse::FindReuse(kept, query);
        f.searched.push_back(static_cast<std::int64_t>(kept.size()));
        f.queries.push_back(static_cast<std::int64_t>(query.size()));
        const auto found = static_cast<std::int64_t>(query.size() - r.misses.size());
        f.level_hits.push_back(found);
        f.hits += found;
        std::vector<std::int64_t> missed;
        missed.reserve(r.misses.size());
        for (std::int32_t i : r.misses) missed.push_back(query[i]);
        query = std::move(missed);
      }
      kept_.insert(kept_.begin(), ids);
      if (static_cast<int>(kept_.size()) > levels_) kept_.pop_back();
      break;
    }
  }
  f.misses = f.vertices - f.hits;
  return f;
}

}  // namespace stratasim
