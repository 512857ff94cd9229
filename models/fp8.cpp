#include "models/fp8.h"

#include <vector>

#include "models/ops.h"

namespace stratasim {
namespace {

constexpr const char* kAmaxOp = "fp8_amax";

// Elements of the operands of one pass of a GEMM of shape `s`: C[m, n] = A[m, k] B[k, n].
double AElements(const GemmShape& s) { return s.batch * s.m * s.k; }
double BElements(const GemmShape& s) { return s.batch * s.k * s.n; }
double CElements(const GemmShape& s) { return s.batch * s.m * s.n; }

// A cast-transpose over `elements` BF16 values: reads them, writes the FP8 copy and its
// transpose.
double CastTransposeBytes(double elements) {
  return QuantizeOp("cast", elements, DType::kBF16, DType::kFP8).forward.bytes +
         elements * BytesPerElement(DType::kFP8);
}

// The cast before `gemm`'s forward (its input X and weight W) and the one after it in forward
// order, whose backward runs before the GEMM's backward (the output gradient dY).
OpCost ForwardCast(const OpCost& gemm) {
  OpCost op;
  op.name = gemm.name + "_fp8_cast";
  op.kind = OpKind::kElementwise;
  op.fp8_cast_of = gemm.name;
  const GemmShape& s = gemm.forward.gemm;
  op.forward.bytes = CastTransposeBytes(AElements(s) + BElements(s));
  return op;
}

OpCost GradientCast(const OpCost& gemm) {
  OpCost op;
  op.name = gemm.name + "_fp8_grad_cast";
  op.kind = OpKind::kElementwise;
  op.fp8_cast_of = gemm.name;
  op.backward_input.bytes = CastTransposeBytes(CElements(gemm.forward.gemm));
  return op;
}

// TE's amax_and_scale_update over the layer's FP8 tensors: each tensor's history is read and
// written once (FP32 values), X and W per GEMM in the forward pass, dY in the backward.
OpCost AmaxUpdate(const LayerCost& layer) {
  double forward_tensors = 0, backward_tensors = 0;
  for (const OpCost& op : layer.ops) {
    if (!IsFp8Gemm(op)) continue;
    forward_tensors += 2 * op.forward.gemm.batch;
    backward_tensors += op.forward.gemm.batch;
  }
  OpCost op;
  op.name = kAmaxOp;
  op.kind = OpKind::kElementwise;
  const double per_tensor = 2 * kAmaxHistory * BytesPerElement(DType::kFP32);
  op.forward.bytes = forward_tensors * per_tensor;
  op.backward_input.bytes = backward_tensors * per_tensor;
  return op;
}

bool RunsInFp8(const LayerCost& layer, const OpCost& op) {
  // The router stays BF16/FP32 in Megatron-LM: it is not a TE linear layer.
  return layer.recomputable && op.kind == OpKind::kGemm && op.forward.gemm.known() &&
         op.name != "router";
}

}  // namespace

bool IsFp8Gemm(const OpCost& op) {
  return op.forward.dtype.has_value() && *op.forward.dtype == DType::kFP8;
}

void MakeFp8Gemm(OpCost& op) {
  const double in = BytesPerElement(DType::kFP8), out = BytesPerElement(DType::kBF16);
  for (KernelCost* c : {&op.forward, &op.backward_input, &op.backward_weight}) {
    if (!c->gemm.known()) continue;
    c->bytes = in * (AElements(c->gemm) + BElements(c->gemm)) + out * CElements(c->gemm);
    c->dtype = DType::kFP8;
  }
  // The input X (m x k) is saved as its FP8 copy rather than in BF16.
  op.saved_bytes -= (out - in) * AElements(op.forward.gemm);
  if (op.saved_bytes < 0) op.saved_bytes = 0;
}

void ApplyFp8Training(Workload& w) {
  w.fp8 = true;
  for (LayerCost& L : w.layers) {
    std::vector<OpCost> ops;
    bool any = false;
    for (OpCost& op : L.ops) {
      if (!RunsInFp8(L, op)) {
        ops.push_back(std::move(op));
        continue;
      }
      any = true;
      MakeFp8Gemm(op);
      ops.push_back(ForwardCast(op));
      ops.push_back(op);
      ops.push_back(GradientCast(op));
    }
    L.ops = std::move(ops);
    if (any) L.ops.push_back(AmaxUpdate(L));
  }
}

void RefreshFp8Bookkeeping(LayerCost& layer) {
  for (size_t i = 0; i < layer.ops.size(); ++i) {
    OpCost& op = layer.ops[i];
    if (op.name == kAmaxOp) {
      const bool recomputed = op.recomputed;
      op = AmaxUpdate(layer);
      op.recomputed = recomputed;
      continue;
    }
    if (op.fp8_cast_of.empty()) continue;
    const bool forward = !op.forward.empty() || op.backward_input.empty();
    const size_t at = forward ? i + 1 : i - 1;
    if (at >= layer.ops.size() || layer.ops[at].name != op.fp8_cast_of) continue;
    const bool recomputed = op.recomputed;
    op = forward ? ForwardCast(layer.ops[at]) : GradientCast(layer.ops[at]);
    op.recomputed = recomputed;
  }
}

}  // namespace stratasim
