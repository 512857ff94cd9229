#include "strategies/gnn/gnn_training.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "core/model_presets.h"
#include "models/graphsage.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

// 4 GPUs, 32 seed vertices each, one micro-batch per iteration, 1 warm-up + 3 measured
// iterations of GraphSAGE on a 20,000-vertex power-law graph.
Scenario Gnn() {
  Scenario s = testing::TinyGptScenario({4, 1, 128, 32, 2, 4});
  s.model = *FindModelPreset("graphsage-products");
  s.model.graph = "power-law";
  s.model.graph_vertices = 20000;
  s.model.graph_degree = 12;
  s.model.fanouts = {5, 3};
  s.model.layers = 2;
  s.training.warmup_iterations = 1;
  s.training.measured_iterations = 3;
  s.training.seed = 11;
  return s;
}

// Bytes of the kCopy tasks called `name` per (iteration, rank).
std::map<std::pair<int, int>, double> CopiedBytes(const Plan& p, const std::string& name) {
  std::map<std::pair<int, int>, double> out;
  for (const Task& t : p.graph.tasks()) {
    const std::string n = t.name.str();
    if (t.kind == TaskKind::kCopy && n.size() >= name.size() &&
        n.compare(n.size() - name.size(), name.size(), name) == 0) {
      EXPECT_EQ(t.copy, CopyDirection::kHostToDevice);
      out[{t.iteration, t.rank}] += t.bytes;
    }
  }
  return out;
}

TEST(GnnTraining, CopiedBytesAreMissesTimesTheFeatureRow) {
  const Scenario s = Gnn();
  const double row = 100 * 4;
  const Plan none = PlanStrategy(s, testing::SpecOf("n", "gnn-no-cache", {}));
  const Plan reuse = PlanStrategy(s, testing::SpecOf("b", "brgraph", {}));
  const auto all = CopiedBytes(none, "/features");
  const auto missed = CopiedBytes(reuse, "/features");
  double hits = 0, vertices = 0;
  for (int it = 0; it < 4; ++it) {
    for (int r = 0; r < 4; ++r) {
      const GraphBatch b = SampleGraphBatch(s.model, 32, 11, it * 4 + r);
      double overlap = 0;
      if (it > 0) {
        const GraphBatch prev = SampleGraphBatch(s.model, 32, 11, (it - 1) * 4 + r);
        const std::set<std::int64_t> kept(prev.ids.begin(), prev.ids.end());
        for (std::int64_t v : b.ids) overlap += kept.count(v);
      }
      const double n = static_cast<double>(b.ids.size());
      EXPECT_DOUBLE_EQ(all.at({it, r}), n * row);
      EXPECT_DOUBLE_EQ(missed.at({it, r}), (n - overlap) * row) << it << " " << r;
      if (it > 0) {
        hits += overlap;
        vertices += n;
      }
    }
  }
  ASSERT_TRUE(reuse.gnn.has_value());
  EXPECT_NEAR(reuse.gnn->HitRate(), hits / vertices, 1e-12);
  EXPECT_NEAR(reuse.gnn->h2d_bytes_per_iteration, (vertices - hits) * row / 3, 1e-6);
  EXPECT_EQ(none.gnn->hits_per_iteration, 0);
}

TEST(GnnTraining, StaticCacheHoldsItsRowsFromTheStart) {
  const Scenario s = Gnn();
  const Plan p =
      PlanStrategy(s, testing::SpecOf("c", "gnn-static-cache", {{"cache_fraction", "0.25"}}));
  int caches = 0;
  for (const Task& t : p.graph.tasks()) {
    if (t.kind == TaskKind::kMemory && t.name.str() == "feature_cache") {
      EXPECT_DOUBLE_EQ(t.memory_delta_bytes, 5000 * 100 * 4.0);
      ++caches;
    }
  }
  EXPECT_EQ(caches, 4);
  EXPECT_DOUBLE_EQ(p.gnn->cache_bytes, 5000 * 100 * 4.0);
  EXPECT_GT(p.gnn->HitRate(), 0.25);  // the highest-degree quarter is hit more than its share
  const Plan sized =
      PlanStrategy(s, testing::SpecOf("c", "gnn-static-cache", {{"cache_size", "2MB"}}));
  EXPECT_DOUBLE_EQ(sized.gnn->cache_bytes, 5000 * 400.0);
}

TEST(GnnTraining, BadOptionsAndModelsAreErrors) {
  const Scenario s = Gnn();
  EXPECT_EQ(
      testing::PlanErrorOf(s, testing::SpecOf("c", "gnn-static-cache",
                                              {{"cache_fraction", "0.1"}, {"cache_size", "2MB"}})),
      "s.yaml:9:5: strategies[0].options.cache_size = \"2MB\": give cache_fraction or "
      "cache_size, not both");
  EXPECT_EQ(
      testing::PlanErrorOf(s, testing::SpecOf("c", "gnn-static-cache", {{"cache_size", "1GB"}})),
      "s.yaml:9:5: strategies[0].options.cache_size = \"1GB\": more than the whole feature table "
      "(20000 vertices x 400 B = 7.63 MiB)");
  EXPECT_EQ(
      testing::PlanErrorOf(s, testing::SpecOf("c", "gnn-static-cache", {{"cache_size", "0MB"}})),
      "s.yaml:9:5: strategies[0].options.cache_size = \"0MB\": must be greater than 0 bytes, or "
      "none");
  EXPECT_NE(
      testing::PlanErrorOf(s, testing::SpecOf("c", "gnn-static-cache", {{"cache_size", "lots"}}))
          .find("s.yaml:9:5: strategies[0].options.cache_size = \"lots\": "),
      std::string::npos);
  EXPECT_NE(testing::PlanErrorOf(s, testing::SpecOf("b", "brgraph", {{"levels", "3"}}))
                .find("strategies[0].options.levels = \"3\""),
            std::string::npos);
  const Scenario gpt = testing::TinyGptScenario({4, 1, 8, 2, 2, 4});
  EXPECT_EQ(testing::PlanErrorOf(gpt, testing::SpecOf("b", "brgraph", {})),
            "s.yaml:8:5: strategies[0]: needs a sampled GNN (model kind graphsage), not model "
            "kind gpt");
}

}  // namespace
}  // namespace stratasim
