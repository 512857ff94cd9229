#include "validate/backend.h"

namespace stratasim::validate {

std::string_view ToString(BackendError::Kind k) {
  switch (k) {
    case BackendError::Kind::kUnavailable:
      return "unavailable";
    case BackendError::Kind::kTooFewRanks:
      return "too few ranks";
    case BackendError::Kind::kOutOfMemory:
      return "out of memory";
    case BackendError::Kind::kCommunication:
      return "communication failure";
    case BackendError::Kind::kExecution:
      return "execution failure";
  }
  return "?";
}

Task GemmTask(const GemmShape& shape, DType dtype) {
  Task t;
  t.kind = TaskKind::kCompute;
  t.op = OpKind::kGemm;
  t.dtype = dtype;
  t.gemm = shape;
  t.flops = 2.0 * shape.m * shape.n * shape.k * shape.batch;
  t.bytes = (shape.m * shape.k + shape.k * shape.n + shape.m * shape.n) * shape.batch *
            BytesPerElement(dtype);
  t.name = "gemm";
  return t;
}

Task ElementwiseTask(double bytes, DType dtype) {
  Task t;
  t.kind = TaskKind::kCompute;
  t.op = OpKind::kElementwise;
  t.dtype = dtype;
  t.bytes = bytes;
  // One FLOP per element written (an add or a scale): half of the bytes are the output.
  t.flops = bytes / 2 / BytesPerElement(dtype);
  t.name = "elementwise";
  return t;
}

}  // namespace stratasim::validate
