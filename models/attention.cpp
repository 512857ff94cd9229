#include "models/attention.h"

#include "models/ops.h"

namespace stratasim {

std::vector<OpCost> UnfusedAttention(const AttentionShape& x) {
  const double b = x.micro_batch, s = x.sequence, a = x.heads, d = x.head_dim;
  const double e = x.bytes_per_element;
  const double scores = b * a * s * s;
  std::vector<OpCost> ops;
  // Q K^T per sequence and head; with grouped-query attention each K serves heads/kv_heads
  // query heads, so the FLOPs are those of multi-head attention.
  OpCost qk = BatchedMatmul("attn_scores", b * a, s, d, s, e);
  qk.attention_core = true;
  ops.push_back(qk);
  OpCost softmax = Elementwise("softmax", scores, e, 1, 1);  // fused scale, mask, softmax
  softmax.saved_bytes = scores * e;                          // its output
  softmax.attention_core = true;
  ops.push_back(softmax);
  if (x.dropout) {
    OpCost drop = Dropout("attn_dropout", scores, e);
    drop.attention_core = true;
    ops.push_back(drop);
  }
  OpCost pv = BatchedMatmul("attn_values", b * a, s, s, d, e);
  // Its input is the dropout's output (without dropout, the softmax output already saved).
  pv.saved_bytes = x.dropout ? scores * e : 0;
  pv.attention_core = true;
  ops.push_back(pv);
  return ops;
}

OpCost FlashAttention(const AttentionShape& x) {
  const double b = x.micro_batch, s = x.sequence, a = x.heads, d = x.head_dim;
  const double e = x.bytes_per_element;
  const double tokens = b * s;
  const double q = tokens * a * d * e;                // Q, and likewise O, dO, dQ
  const double kv = 2 * tokens * x.kv_heads * d * e;  // K and V, and likewise dK and dV
  const double logsumexp = b * a * s * 4;             // FP32, one per query row and head
  const double causal = x.causal ? 0.5 : 1;           // the masked score tiles are skipped
  const double forward_flops = causal * 4 * b * s * s * a * d;
  const GemmShape shape{s, s, d, b * a};

  OpCost op;
  op.name = "attention";
  op.kind = OpKind::kFusedAttention;
  op.attention_core = true;
  op.forward.flops = forward_flops;
  op.forward.bytes = q + kv + q + logsumexp;
  op.backward_input.flops = 2.5 * forward_flops;
  op.backward_input.bytes = (q + kv + 2 * q + logsumexp) + (q + kv);
  for (KernelCost* c : {&op.forward, &op.backward_input}) {
    c->gemm = shape;
    c->causal = x.causal;
  }
  op.saved_bytes = logsumexp;
  return op;
}

}  // namespace stratasim
