#include "models/graphsage.h"

#include <gtest/gtest.h>

#include "core/model_presets.h"
#include "models/test_util.h"

namespace stratasim {
namespace {

TEST(GraphSage, SamplingIsSeededAndBounded) {
  const ModelSpec m = *FindModelPreset("graphsage-reddit");  // fan-outs 25, 10
  const GraphBatch a = SampleGraphBatch(m, 512, 42, 0);
  const GraphBatch again = SampleGraphBatch(m, 512, 42, 0);
  const GraphBatch other = SampleGraphBatch(m, 512, 42, 1);
  EXPECT_EQ(a.vertices, again.vertices);
  EXPECT_NE(a.vertices, other.vertices);
  ASSERT_EQ(a.vertices.size(), 3u);
  EXPECT_EQ(a.vertices[0], 512);
  EXPECT_EQ(a.edges[0], 512 * 25);
  EXPECT_LE(a.vertices[1], 512 * 26);
  EXPECT_GT(a.vertices[1], 512 * 20);  // few repeats among 233k vertices
  EXPECT_EQ(a.edges[1], a.vertices[1] * 10);
  EXPECT_LE(a.vertices[2], 232965);
  EXPECT_DOUBLE_EQ(a.feature_bytes, a.vertices[2] * 602 * 4);
}

TEST(GraphSage, SmallGraphSaturatesAndDegreeCapsTheFanout) {
  ModelSpec m = *FindModelPreset("graphsage-reddit");
  m.graph_vertices = 1000;
  m.graph_degree = 4;
  const GraphBatch b = SampleGraphBatch(m, 100, 1, 0);
  EXPECT_EQ(b.edges[0], 100 * 4);  // min(25, degree 4)
  EXPECT_LE(b.vertices[2], 1000);
}

TEST(GraphSage, PerOpFlopsSumToTheClosedForm) {
  const ModelSpec m = *FindModelPreset("graphsage-products");
  const Workload w = BuildGraphSage(m, 256, DType::kFP32, 7, 3);
  const GraphBatch b = SampleGraphBatch(m, 256, 7, 3);
  const double flops = testing::TrainingFlops(w);
  EXPECT_NEAR(flops, GraphSageTrainingFlops(m, b), 1e-9 * flops);
  EXPECT_DOUBLE_EQ(w.params, GraphSageParameterCount(m));
  EXPECT_DOUBLE_EQ(w.input_bytes, b.feature_bytes);
  // Layer 0 combines the features of the vertices two hops out (of three).
  EXPECT_EQ(w.layers[0].ops[1].forward.gemm.m, b.vertices[2]);
  EXPECT_EQ(w.layers[0].ops[1].forward.gemm.k, 2 * 100);
}

TEST(GraphSage, BatchLargerThanTheGraphIsAnError) {
  ModelSpec m = *FindModelPreset("graphsage-reddit");
  m.graph_vertices = 10;
  EXPECT_THROW(SampleGraphBatch(m, 11, 0, 0), ConfigError);
}

}  // namespace
}  // namespace stratasim
