#include "strategies/gradient_buckets.h"

#include <gtest/gtest.h>

namespace stratasim {
namespace {

LayerCost Layer(double params) {
  LayerCost l;
  l.params = params;
  return l;
}

TEST(GradientBuckets, ReverseLayerOrderWholeLayersClosingAtTheCap) {
  // Layers 0..4 with 10, 0, 30, 20, 5 parameters; 2 bytes each; cap 50 bytes.
  const std::vector<LayerCost> layers = {Layer(10), Layer(0), Layer(30), Layer(20), Layer(5)};
  const std::vector<GradientBucket> b = MakeGradientBuckets(layers, 2, 50);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_DOUBLE_EQ(b[0].params, 25);  // layers 4 and 3: 50 bytes, closes
  EXPECT_EQ(b[0].ready_after_layer, 3);
  EXPECT_DOUBLE_EQ(b[1].params, 30);  // layer 2 alone is over the cap
  EXPECT_EQ(b[1].ready_after_layer, 2);
  EXPECT_DOUBLE_EQ(b[2].params, 10);  // layer 0 (layer 1 has none): the rest
  EXPECT_EQ(b[2].ready_after_layer, 0);
}

TEST(GradientBuckets, NoParametersNoBuckets) {
  EXPECT_TRUE(MakeGradientBuckets({Layer(0)}, 2, 10).empty());
}

}  // namespace
}  // namespace stratasim
