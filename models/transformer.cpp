#include "models/transformer.h"

#include <cmath>

#include "models/attention.h"
#include "models/ops.h"

namespace stratasim {
namespace {

// An expert MLP projection run for all experts at once: `experts` products of [capacity, k] by
// [k, n] (a grouped GEMM), each expert with its own weights.
OpCost ExpertLinear(const std::string& name, double experts, double capacity, double k, double n,
                    double e) {
  OpCost op = Linear(name, capacity, k, n, e);
  for (KernelCost* c : {&op.forward, &op.backward_input, &op.backward_weight}) {
    c->flops *= experts;
    c->bytes *= experts;
    c->gemm.batch = experts;
  }
  op.saved_bytes *= experts;
  return op;
}

// Residual add, with the dropout before it fused in when the model uses dropout (Megatron's
// bias-dropout-add kernel): reads the branch and the residual, writes the sum (and a mask).
OpCost ResidualAdd(const std::string& name, double elements, double e, bool dropout) {
  OpCost op = Elementwise(name, elements, e, 2, 1);
  if (dropout) {
    op.forward.bytes += elements;
    op.backward_input.bytes += elements;
    op.saved_bytes = elements;  // the mask
  }
  return op;
}

OpCost Norm(const std::string& name, double elements, double e) {
  OpCost op = Elementwise(name, elements, e, 1, 1);
  op.saved_bytes = elements * e;  // its input (mean and variance are negligible)
  return op;
}

}  // namespace

double ExpertCapacity(const TransformerLayerShape& x) {
  const double tokens = x.micro_batch * x.sequence;
  return std::ceil(x.capacity_factor * x.top_k * tokens / x.experts);
}

double TransformerLayerParams(const TransformerLayerShape& x) {
  const double h = x.hidden, f = x.ffn_hidden;
  const double kv = x.kv_heads * (h / x.heads);  // width of K and of V
  const double b = x.bias ? 1 : 0;
  double p = h * (h + 2 * kv) + b * (h + 2 * kv) + h * h + b * h;  // QKV and output projection
  p += 2 * (x.rms_norm ? h : 2 * h);                               // two norms
  const double mlp = x.swiglu ? 3 * h * f + b * (2 * f + h) : 2 * h * f + b * (f + h);
  if (x.experts > 0) {
    p += h * x.experts + x.experts * mlp;  // gate (no bias) and the experts
  } else {
    p += mlp;
  }
  return p;
}

LayerCost TransformerLayer(const std::string& name, const TransformerLayerShape& x) {
  const double b = x.micro_batch, s = x.sequence, h = x.hidden, a = x.heads, f = x.ffn_hidden;
  const double e = x.bytes_per_element;
  const double head_dim = h / a;
  const double kv = x.kv_heads * head_dim;
  const double tokens = b * s;  // rows of every activation matrix

  LayerCost L;
  L.name = name;
  L.recomputable = true;
  L.input_bytes = tokens * h * e;
  L.params = TransformerLayerParams(x);
  auto add = [&](OpCost op) { L.ops.push_back(std::move(op)); };
  auto norm = [&](const std::string& n) { add(Norm(n, tokens * h, e)); };

  // Attention block.
  if (!x.post_norm) norm("norm1");
  OpCost qkv = Linear("qkv", tokens, h, h + 2 * kv, e);
  qkv.saved_bytes += tokens * (h + 2 * kv) * e;  // Q, K and V, kept for the attention core
  add(qkv);
  if (x.rotary) add(Elementwise("rotary", tokens * (h + kv), e, 1, 1));
  AttentionShape core;
  core.micro_batch = b;
  core.sequence = s;
  core.heads = a;
  core.kv_heads = x.kv_heads;
  core.head_dim = head_dim;
  core.bytes_per_element = e;
  core.dropout = x.dropout;
  core.causal = x.causal;
  if (x.attention == Attention::kFlash) {
    add(FlashAttention(core));
  } else {
    for (OpCost& op : UnfusedAttention(core)) add(std::move(op));
  }
  add(Linear("proj", tokens, h, h, e));
  add(ResidualAdd("residual1", tokens * h, e, x.dropout));
  if (x.post_norm) norm("norm1");

  // MLP block.
  if (!x.post_norm) norm("norm2");
  if (x.experts > 0) {
    const double capacity = ExpertCapacity(x);
    const double slots = x.experts * capacity;  // token slots over all experts
    add(Linear("router", tokens, h, x.experts, e));
    OpCost gate = Elementwise("router_topk", tokens * x.experts, 4, 1, 1);  // FP32 softmax
    gate.saved_bytes = tokens * x.experts * 4;
    add(gate);
    add(Elementwise("dispatch", slots * h, e, 1, 1));
    if (x.swiglu) {
      // Mixtral's experts are SwiGLU MLPs (Jiang et al. 2024, Section 2.1): the gate and up
      // projections as one GEMM of width 2f, then SiLU-gating, as the dense SwiGLU MLP.
      add(ExpertLinear("expert_gate_up", x.experts, capacity, h, 2 * f, e));
      OpCost act = Elementwise("expert_swiglu", slots * f, e, 2, 1);
      act.saved_bytes = 2 * slots * f * e;  // both branches
      add(act);
    } else {
      add(ExpertLinear("expert_up", x.experts, capacity, h, f, e));
      OpCost act = Elementwise("expert_gelu", slots * f, e, 1, 1);
      act.saved_bytes = slots * f * e;
      add(act);
    }
    add(ExpertLinear("expert_down", x.experts, capacity, f, h, e));
    add(Elementwise("combine", slots * h, e, 1, 1));
  } else if (x.swiglu) {
    add(Linear("gate_up", tokens, h, 2 * f, e));
    OpCost act = Elementwise("swiglu", tokens * f, e, 2, 1);
    act.saved_bytes = 2 * tokens * f * e;  // both branches
    add(act);
    add(Linear("down", tokens, f, h, e));
  } else {
    add(Linear("mlp_up", tokens, h, f, e));
    OpCost act = Elementwise("gelu", tokens * f, e, 1, 1);
    act.saved_bytes = tokens * f * e;  // its input
    add(act);
    add(Linear("mlp_down", tokens, f, h, e));
  }
  add(ResidualAdd("residual2", tokens * h, e, x.dropout));
  if (x.post_norm) norm("norm2");
  return L;
}

}  // namespace stratasim
