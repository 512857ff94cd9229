#include "strategies/precision/layer_precision.h"

#include <string>
#include <utility>

#include "core/error.h"

namespace stratasim {
namespace {

double OutputElements(const GemmShape& s) { return s.batch * s.m * s.n; }

// A memory-bound kernel of `bytes` in the given pass, named after its GEMM.
OpCost CastOp(const std::string& name, double forward_bytes, double backward_bytes) {
  OpCost op;
  op.name = name;
  op.kind = OpKind::kElementwise;
  op.forward.bytes = forward_bytes;
  op.backward_input.bytes = backward_bytes;
  return op;
}

}  // namespace

double WeightElements(const OpCost& op) {
  if (op.kind != OpKind::kGemm || op.backward_weight.empty()) return 0;
  return OutputElements(op.backward_weight.gemm);
}

std::vector<WeightLayer> WeightLayers(const Workload& w) {
  std::vector<WeightLayer> out;
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const std::vector<OpCost>& ops = w.layers[l].ops;
    for (size_t i = 0; i < ops.size(); ++i) {
      const double params = WeightElements(ops[i]);
      if (params > 0 && ops[i].forward.gemm.known()) {
        out.push_back({static_cast<int>(l), static_cast<int>(i), params});
      }
    }
  }
  return out;
}

LayerPrecision ApplyLayerFormats(Workload& w, const std::vector<DType>& formats, DType storage,
                                 double grad_bytes_per_param) {
  const std::vector<WeightLayer> weights = WeightLayers(w);
  if (formats.size() != weights.size()) {
    throw Error("ApplyLayerFormats: " + std::to_string(formats.size()) + " formats for " +
                std::to_string(weights.size()) + " weight layers");
  }
  const double b_s = BytesPerElement(storage), b_g = grad_bytes_per_param;
  LayerPrecision out;
  out.grad_bytes.assign(w.layers.size(), 0);
  out.decode_bytes.assign(w.layers.size(), 0);
  size_t next = 0;
  for (size_t l = 0; l < w.layers.size(); ++l) {
    LayerCost& L = w.layers[l];
    // Tied weights (see the header): the layer owns less than its GEMMs' weights, and its
    // gradient is not quantized.
    double gemm_weights = 0;
    for (const WeightLayer& x : weights)
      gemm_weights += x.layer == static_cast<int>(l) ? x.params : 0;
    const bool tied = gemm_weights > L.params;
    std::vector<OpCost> ops;
    double quantized = 0, quantized_bytes = 0, decode = 0;
    for (size_t i = 0; i < L.ops.size(); ++i) {
      OpCost op = std::move(L.ops[i]);
      const bool weight_layer = next < weights.size() &&
                                weights[next].layer == static_cast<int>(l) &&
                                weights[next].op == static_cast<int>(i);
      if (!weight_layer || formats[next] == storage) {
        if (weight_layer) ++next;
        ops.push_back(std::move(op));
        continue;
      }
      const DType f = formats[next];
      const double b_f = BytesPerElement(f), d = b_s - b_f;
      const double W = weights[next++].params;
      const double Y = OutputElements(op.forward.gemm);
      // The op's forward traffic is X + W + Y elements in s (models/ops.h's Linear and Conv2d).
      const double X = op.forward.bytes / b_s - W - Y;
      if (X < 0) {
        throw Error("ApplyLayerFormats: the forward bytes of " + L.name + "/" + op.name +
                    " do not hold its weight and output");
      }
      op.forward.bytes -= d * (X + W);          // reads X and W in f
      op.backward_input.bytes -= d * (Y + W);   // reads dY and W in f
      op.backward_weight.bytes -= d * (X + Y);  // reads X and dY in f
      for (KernelCost* c : {&op.forward, &op.backward_input, &op.backward_weight}) c->dtype = f;
      op.saved_bytes -= d * X;  // keeps its input X in f for the weight gradient
      if (op.saved_bytes < 0) op.saved_bytes = 0;
      const double cast = b_s + b_f;
      if (!tied) ops.push_back(CastOp(op.name + "_dw_quant", 0, W * cast));
      ops.push_back(CastOp(op.name + "_quant", (X + W) * cast, 0));
      const std::string name = op.name;
      ops.push_back(std::move(op));
      ops.push_back(CastOp(name + "_dy_quant", 0, Y * cast));
      quantized += W;
      quantized_bytes += W * b_f;
      decode += W * (b_f + b_g);
    }
    L.ops = std::move(ops);
    if (tied) {
      out.grad_bytes[l] = L.params * b_g;
      continue;
    }
    out.grad_bytes[l] = (L.params - quantized) * b_g + quantized_bytes;
    out.decode_bytes[l] = decode;
  }
  return out;
}

}  // namespace stratasim
