#include "strategies/gradient_buckets.h"

#include <gtest/gtest.h>

#include "core/error.h"

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
  EXPECT_DOUBLE_EQ(b[0].bytes, 50);
  EXPECT_DOUBLE_EQ(b[1].bytes, 60);
  EXPECT_DOUBLE_EQ(b[2].bytes, 20);
}

TEST(GradientBuckets, PerLayerBytesCloseBucketsAtTheCap) {
  // The same layers, layer 3's gradient at 1 byte per parameter and layer 4's at half a byte:
  // layers 4 and 3 now hold 22.5 bytes, below the cap, so layer 2 joins them.
  const std::vector<LayerCost> layers = {Layer(10), Layer(0), Layer(30), Layer(20), Layer(5)};
  const std::vector<GradientBucket> b =
      MakeGradientBuckets(layers, std::vector<double>{20, 0, 60, 20, 2.5}, 50);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_DOUBLE_EQ(b[0].params, 55);
  EXPECT_DOUBLE_EQ(b[0].bytes, 82.5);
  EXPECT_EQ(b[0].ready_after_layer, 2);
  EXPECT_DOUBLE_EQ(b[1].params, 10);
  EXPECT_DOUBLE_EQ(b[1].bytes, 20);
  EXPECT_EQ(b[1].ready_after_layer, 0);
  // With every layer at 2 bytes per parameter it packs as the uniform version does.
  const std::vector<GradientBucket> u =
      MakeGradientBuckets(layers, std::vector<double>{20, 0, 60, 40, 10}, 50);
  const std::vector<GradientBucket> v = MakeGradientBuckets(layers, 2, 50);
  ASSERT_EQ(u.size(), v.size());
  for (size_t k = 0; k < u.size(); ++k) {
    EXPECT_DOUBLE_EQ(u[k].params, v[k].params);
    EXPECT_DOUBLE_EQ(u[k].bytes, v[k].bytes);
    EXPECT_EQ(u[k].ready_after_layer, v[k].ready_after_layer);
  }
  EXPECT_THROW(MakeGradientBuckets(layers, std::vector<double>{1, 2}, 50), Error);
}

TEST(GradientBuckets, NoParametersNoBuckets) {
  EXPECT_TRUE(MakeGradientBuckets({Layer(0)}, 2, 10).empty());
}

}  // namespace
}  // namespace stratasim
