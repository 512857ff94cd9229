#include "models/memory.h"

#include <algorithm>

namespace stratasim {

double TrainingBytesPerParam(DType precision) { return std::max(2.0, BytesPerElement(precision)); }

ModelStateBytes AdamStateBytes(double params, DType precision, StateSharding sharding,
                               double grad_bytes_per_param) {
  const double e = TrainingBytesPerParam(precision);
  const double master = e < 4 ? 4 : 0;  // FP32 training updates its weights in place
  ModelStateBytes b;
  // FP8 training's FP8 copy of the weights is sharded as the weights are.
  const double fp8_copy = precision == DType::kFP8 ? BytesPerElement(DType::kFP8) : 0;
  b.weights = params * (e + fp8_copy) / sharding.weights;
  b.gradients = params * (grad_bytes_per_param > 0 ? grad_bytes_per_param : e) / sharding.gradients;
  b.optimizer = params * (master + 8) / sharding.optimizer;
  return b;
}

double GptLayerActivationBytes(double s, double b, double h, double a, Recompute recompute) {
  switch (recompute) {
    case Recompute::kFull:
      return 2 * s * b * h;
    case Recompute::kSelective:
      return 34 * s * b * h;
    case Recompute::kNone:
      break;
  }
  return s * b * h * (34 + 5 * a * s / h);
}

double PeakActivationBytes(const Workload& w, int in_flight) {
  double largest_recomputed = 0;
  for (const LayerCost& L : w.layers) {
    largest_recomputed = std::max(largest_recomputed, L.recomputed_bytes);
  }
  return in_flight * w.ActivationBytes() + largest_recomputed;
}

}  // namespace stratasim
