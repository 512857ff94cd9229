#include "strategies/gradient_buckets.h"

#include <string>

#include "core/error.h"

namespace stratasim {

std::vector<GradientBucket> MakeGradientBuckets(const std::vector<LayerCost>& layers,
                                                double bytes_per_param, double cap_bytes) {
  std::vector<GradientBucket> buckets;
  GradientBucket open;
  for (int i = static_cast<int>(layers.size()) - 1; i >= 0; --i) {
    if (layers[i].params <= 0) continue;
    open.params += layers[i].params;
    open.ready_after_layer = i;
    if (open.params * bytes_per_param >= cap_bytes) {
      open.bytes = open.params * bytes_per_param;
      buckets.push_back(open);
      open = GradientBucket{};
    }
  }
  if (open.params > 0) {
    open.bytes = open.params * bytes_per_param;
    buckets.push_back(open);
  }
  return buckets;
}

std::vector<GradientBucket> MakeGradientBuckets(const std::vector<LayerCost>& layers,
                                                const std::vector<double>& layer_bytes,
                                                double cap_bytes) {
  if (layer_bytes.size() != layers.size()) {
    throw Error("MakeGradientBuckets: " + std::to_string(layer_bytes.size()) +
                " gradient sizes for " + std::to_string(layers.size()) + " layers");
  }
  std::vector<GradientBucket> buckets;
  GradientBucket open;
  for (int i = static_cast<int>(layers.size()) - 1; i >= 0; --i) {
    if (layers[i].params <= 0) continue;
    open.params += layers[i].params;
    open.bytes += layer_bytes[i];
    open.ready_after_layer = i;
    if (open.bytes >= cap_bytes) {
      buckets.push_back(open);
      open = GradientBucket{};
    }
  }
  if (open.params > 0) buckets.push_back(open);
  return buckets;
}

}  // namespace stratasim
