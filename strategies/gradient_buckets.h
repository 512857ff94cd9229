// Gradient buckets: how data-parallel strategies group gradients for their collectives.
#ifndef STRATASIM_STRATEGIES_GRADIENT_BUCKETS_H_
#define STRATASIM_STRATEGIES_GRADIENT_BUCKETS_H_

#include <vector>

#include "models/workload.h"

namespace stratasim {

struct GradientBucket {
  double params = 0;           // parameters whose gradients the bucket holds
  int ready_after_layer = -1;  // index into the layers whose backward completes it
  // Bytes of its gradients on the wire: params x bytes_per_param, or the sum of its layers'
  // own bytes when the layers' gradients differ in format (layer-wise precision,
  // strategies/precision/).
  double bytes = 0;
};

// Packs gradients into buckets in reverse layer order, whole layers only, as PyTorch DDP's
// Reducer and DeepSpeed's reduce buckets do: a bucket closes once it holds at least
// `cap_bytes` at `bytes_per_param`. Layers without parameters are skipped.
std::vector<GradientBucket> MakeGradientBuckets(const std::vector<LayerCost>& layers,
                                                double bytes_per_param, double cap_bytes);

// The same with each layer's gradient bytes given (layer_bytes[i] for layers[i]): a bucket
// closes once it holds at least `cap_bytes` of them. Layers without parameters are skipped.
// Throws Error when layer_bytes does not have one entry per layer.
std::vector<GradientBucket> MakeGradientBuckets(const std::vector<LayerCost>& layers,
                                                const std::vector<double>& layer_bytes,
                                                double cap_bytes);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_GRADIENT_BUCKETS_H_
