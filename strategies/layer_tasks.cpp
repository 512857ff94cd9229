#include "strategies/layer_tasks.h"

namespace stratasim {
namespace {

Task Kernel(const TaskPlace& at, const std::string& name, OpKind op, DType dtype, double flops,
            double bytes, Phase phase) {
  Task t;
  t.kind = TaskKind::kCompute;
  t.rank = at.rank;
  t.stream = at.stream;
  t.iteration = at.iteration;
  t.phase = phase;
  t.name = at.prefix + name;
  t.op = op;
  t.dtype = dtype;
  t.flops = flops;
  t.bytes = bytes;
  return t;
}

}  // namespace

TaskId AddMemory(TaskGraph& g, const TaskPlace& at, const std::string& name,
                 const std::string& category, double delta_bytes) {
  Task t;
  t.kind = TaskKind::kMemory;
  t.rank = at.rank;
  t.stream = at.stream;
  t.iteration = at.iteration;
  t.name = at.prefix + name;
  t.category = category;
  t.memory_delta_bytes = delta_bytes;
  return g.Add(std::move(t));
}

TaskId AddForward(TaskGraph& g, const LayerCost& layer, DType dtype, const TaskPlace& at,
                  TaskId after) {
  TaskId last = after;
  for (const OpCost& op : layer.ops) {
    Task t = Kernel(at, layer.name + "/" + op.name + "/fwd", op.kind, dtype, op.forward_flops,
                    op.forward_bytes, Phase::kForward);
    if (last >= 0) t.deps.push_back(last);
    last = g.Add(std::move(t));
  }
  if (layer.activation_bytes > 0) {
    AddMemory(g, at, layer.name + "/activations", "activations", layer.activation_bytes);
  }
  return last;
}

TaskId AddBackward(TaskGraph& g, const LayerCost& layer, DType dtype, const TaskPlace& at,
                   TaskId after) {
  TaskId last = after;
  for (auto op = layer.ops.rbegin(); op != layer.ops.rend(); ++op) {
    Task t = Kernel(at, layer.name + "/" + op->name + "/bwd", op->kind, dtype, op->backward_flops,
                    op->backward_bytes, Phase::kBackward);
    if (last >= 0) t.deps.push_back(last);
    last = g.Add(std::move(t));
  }
  if (layer.activation_bytes > 0) {
    AddMemory(g, at, layer.name + "/activations", "activations", -layer.activation_bytes);
  }
  return last;
}

double AdamStateBytesPerParam(DType precision) {
  const double e = BytesPerElement(precision);
  const double master = e < 4 ? 4 : 0;
  return e /*weights*/ + e /*gradients*/ + master + 8 /*Adam m and v in FP32*/;
}

Task AdamStepTask(double params, DType precision) {
  const double e = BytesPerElement(precision);
  Task t;
  t.kind = TaskKind::kCompute;
  t.phase = Phase::kOptimizer;
  t.op = OpKind::kOptimizer;
  t.dtype = DType::kFP32;
  t.name = "adam";
  t.flops = 10 * params;
  t.bytes = params * (e + 3 * 8 + (e < 4 ? e : 0));
  return t;
}

}  // namespace stratasim
