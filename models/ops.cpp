#include "models/ops.h"

#include <cmath>

namespace stratasim {

OpCost Linear(const std::string& name, double m, double k, double n, double e) {
  OpCost op;
  op.name = name;
  op.kind = OpKind::kGemm;
  const double bytes = e * (m * k + k * n + m * n);
  op.forward = KernelCost{2 * m * k * n, bytes, GemmShape{m, n, k, 1}, std::nullopt};
  op.backward_input =
      KernelCost{2 * m * k * n, bytes, GemmShape{m, k, n, 1}, std::nullopt};  // dY W^T
  op.backward_weight =
      KernelCost{2 * m * k * n, bytes, GemmShape{k, n, m, 1}, std::nullopt};  // X^T dY
  op.saved_bytes = e * m * k;
  return op;
}

OpCost BatchedMatmul(const std::string& name, double batch, double m, double k, double n,
                     double e) {
  OpCost op;
  op.name = name;
  op.kind = OpKind::kAttention;
  const double bytes = batch * e * (m * k + k * n + m * n);
  op.forward = KernelCost{2 * batch * m * k * n, bytes, GemmShape{m, n, k, batch}, std::nullopt};
  op.backward_input =
      KernelCost{4 * batch * m * k * n, 2 * bytes, GemmShape{m, k, n, 2 * batch}, std::nullopt};
  return op;
}

OpCost Elementwise(const std::string& name, double elements, double e, double reads,
                   double writes) {
  OpCost op;
  op.name = name;
  op.kind = OpKind::kElementwise;
  op.forward.bytes = (reads + writes) * elements * e;
  op.backward_input.bytes = 2 * op.forward.bytes;
  return op;
}

OpCost Dropout(const std::string& name, double elements, double e) {
  OpCost op = Elementwise(name, elements, e, 1, 1);
  op.forward.bytes += elements;                      // the mask
  op.backward_input.bytes = elements * (2 * e + 1);  // gradient in and out, mask in
  op.saved_bytes = elements;
  return op;
}

OpCost Conv2d(const std::string& name, double batch, double in_channels, double in_size,
              double out_channels, double kernel, double stride, double e, bool save_input) {
  // "Same" padding: the output is the input divided by the stride, rounded up.
  const double out_size = std::ceil(in_size / stride);
  const double m = batch * out_size * out_size;
  const double k = in_channels * kernel * kernel;
  const double n = out_channels;
  OpCost op = Linear(name, m, k, n, e);
  // The im2col matrix is not materialised: traffic is the input image, the filters and the
  // output, not m * k.
  const double input = batch * in_channels * in_size * in_size * e;
  const double bytes = input + k * n * e + m * n * e;
  op.forward.bytes = bytes;
  op.backward_input.bytes = bytes;
  op.backward_weight.bytes = bytes;
  op.saved_bytes = save_input ? input : 0;
  return op;
}

OpCost QuantizeOp(const std::string& name, double elements, DType from, DType to) {
  OpCost op;
  op.name = name;
  op.kind = OpKind::kElementwise;
  op.forward.bytes = elements * (BytesPerElement(from) + BytesPerElement(to));
  return op;
}

}  // namespace stratasim
