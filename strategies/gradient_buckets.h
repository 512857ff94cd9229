// Gradient buckets: how data-parallel strategies group gradients for their collectives.
#ifndef STRATASIM_STRATEGIES_GRADIENT_BUCKETS_H_
#define STRATASIM_STRATEGIES_GRADIENT_BUCKETS_H_

#include <vector>

#include "models/workload.h"

namespace stratasim {

struct GradientBucket {
  double params = 0;           // parameters whose gradients the bucket holds
  int ready_after_layer = -1;  // index into the layers whose backward completes it
};

// Packs gradients into buckets in reverse layer order, whole layers only, as PyTorch DDP's
// Reducer and DeepSpeed's reduce buckets do: a bucket closes once it holds at least
// `cap_bytes` at `bytes_per_param`. Layers without parameters are skipped.
std::vector<GradientBucket> MakeGradientBuckets(const std::vector<LayerCost>& layers,
                                                double bytes_per_param, double cap_bytes);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_GRADIENT_BUCKETS_H_
