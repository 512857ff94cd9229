#include "strategies/gnn/feature_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <set>

#include "core/model_presets.h"
#include "kernels/batch_reuse_ref.h"
#include "models/graphsage.h"

namespace stratasim {
namespace {

ModelSpec SmallPowerLaw() {
  ModelSpec m = *FindModelPreset("graphsage-products");
  m.graph = "power-law";
  m.graph_vertices = 20000;
  m.graph_degree = 12;
  m.fanouts = {5, 3};
  m.layers = 2;
  return m;
}

std::vector<std::vector<std::int64_t>> Batches(int count) {
  std::vector<std::vector<std::int64_t>> out;
  for (int i = 0; i < count; ++i) out.push_back(SampleGraphBatch(SmallPowerLaw(), 64, 5, i).ids);
  return out;
}

// |a ∩ b| with std::set, independently of the kernel's sorted search.
std::int64_t Overlap(const std::vector<std::int64_t>& a, const std::set<std::int64_t>& b) {
  std::int64_t n = 0;
  for (std::int64_t v : std::set<std::int64_t>(a.begin(), a.end())) n += b.count(v);
  return n;
}

TEST(FeatureSource, ReuseHitsAreTheOverlapOfConsecutiveBatches) {
  const auto batches = Batches(6);
  FeatureSource one = FeatureSource::BatchReuse(1, 20000);
  // Past kBitmapVertices the kept ids are searched sorted: the same answers.
  FeatureSource searched = FeatureSource::BatchReuse(1, kBitmapVertices + 1);
  for (size_t t = 0; t < batches.size(); ++t) {
    const FeatureLookup f = one.Next(batches[t]);
    EXPECT_EQ(searched.Next(batches[t]).hits, f.hits);
    const std::int64_t expected =
        t == 0 ? 0
               : Overlap(batches[t],
                         std::set<std::int64_t>(batches[t - 1].begin(), batches[t - 1].end()));
    EXPECT_EQ(f.hits, expected) << t;
    if (t > 0) {
      // The duplicate-detection kernel's CPU reference finds the same misses.
      EXPECT_EQ(f.misses,
                static_cast<std::int64_t>(
                    kernels::batch_reuse::FindReuse(batches[t - 1], batches[t]).misses.size()));
    }
    EXPECT_EQ(f.misses, static_cast<std::int64_t>(batches[t].size()) - expected);
    if (t > 0) {
      EXPECT_GT(f.hits, 0) << "a power-law graph's heavy vertices recur";
    }
  }
}

TEST(FeatureSource, TwoLevelHitsAreTheOverlapWithEitherOfTheLastTwoBatches) {
  const auto batches = Batches(6);
  FeatureSource two = FeatureSource::BatchReuse(2, 20000);
  std::int64_t extra = 0;
  for (size_t t = 0; t < batches.size(); ++t) {
    const FeatureLookup f = two.Next(batches[t]);
    std::set<std::int64_t> kept;
    for (size_t k = 1; k <= 2 && k <= t; ++k)
      kept.insert(batches[t - k].begin(), batches[t - k].end());
    EXPECT_EQ(f.hits, Overlap(batches[t], kept)) << t;
    if (t >= 2) {
      // Level 2 searches only level 1's misses.
      EXPECT_EQ(f.queries[1], f.vertices - f.level_hits[0]);
      extra += f.level_hits[1];
    }
  }
  EXPECT_GT(extra, 0);
}

TEST(FeatureSource, StaticCacheHitsAreTheCachedVertices) {
  const auto batches = Batches(2);
  auto cached = std::make_shared<const std::vector<std::int64_t>>(
      std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  FeatureSource s = FeatureSource::StaticCache(cached, 20000);
  FeatureSource sorted = FeatureSource::StaticCache(cached, kBitmapVertices + 1);
  for (const auto& b : batches) {
    const std::int64_t expected =
        std::count_if(b.begin(), b.end(), [](std::int64_t v) { return v < 10; });
    EXPECT_EQ(s.Next(b).hits, expected);
    EXPECT_EQ(sorted.Next(b).hits, expected);
  }
  EXPECT_EQ(FeatureSource::NoCache().Next(batches[0]).hits, 0);
}

}  // namespace
}  // namespace stratasim
