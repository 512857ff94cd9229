#include "strategies/layer_tasks.h"

namespace stratasim {
Task KernelTask(const TaskPlace& at, const std::string& name, OpKind op, DType dtype,
                const KernelCost& cost, Phase phase) {
  Task t;
  t.kind = TaskKind::kCompute;
  t.rank = at.rank;
  t.stream = at.stream;
  t.iteration = at.iteration;
  t.phase = phase;
  t.name = Name::Join(at.prefix, name);
  t.op = op;
  t.dtype = cost.dtype.value_or(dtype);  // an FP8 GEMM's own format, else the workload's
  t.flops = cost.flops;
  t.bytes = cost.bytes;
  t.gemm = cost.gemm;
  t.causal = cost.causal;
  return t;
}

namespace {

// Adds `t` after `last` (if >= 0) and returns its id.
TaskId Chain(TaskGraph& g, Task t, TaskId last) {
  if (last >= 0) t.deps.push_back(last);
  return g.Add(std::move(t));
}

}  // namespace

TaskId AddMemory(TaskGraph& g, const TaskPlace& at, const std::string& name,
                 const std::string& category, double delta_bytes) {
  Task t;
  t.kind = TaskKind::kMemory;
  t.rank = at.rank;
  t.stream = at.stream;
  t.iteration = at.iteration;
  t.name = Name::Join(at.prefix, name);
  t.category = category;
  t.memory_delta_bytes = delta_bytes;
  return g.Add(std::move(t));
}

TaskId AddForward(TaskGraph& g, const LayerCost& layer, DType dtype, const TaskPlace& at,
                  TaskId after) {
  TaskId last = after;
  for (const OpCost& op : layer.ops) {
    if (op.forward.empty()) continue;  // a backward-only kernel (FP8's gradient cast)
    last = Chain(g,
                 KernelTask(at, layer.name + "/" + op.name + "/fwd", op.kind, dtype, op.forward,
                            Phase::kForward),
                 last);
  }
  if (layer.activation_bytes > 0) {
    AddMemory(g, at, layer.name + "/activations", "activations", layer.activation_bytes);
  }
  return last;
}

TaskId AddBackward(TaskGraph& g, const LayerCost& layer, DType dtype, const TaskPlace& at,
                   TaskId after) {
  TaskId last = after;
  if (layer.recomputed_bytes > 0) {
    AddMemory(g, at, layer.name + "/recomputed", "activations", layer.recomputed_bytes);
  }
  for (const OpCost& op : layer.ops) {
    if (!op.recomputed || op.forward.empty()) continue;
    last = Chain(g,
                 KernelTask(at, layer.name + "/" + op.name + "/recompute", op.kind, dtype,
                            op.forward, Phase::kRecompute),
                 last);
  }
  for (auto op = layer.ops.rbegin(); op != layer.ops.rend(); ++op) {
    const std::string name = layer.name + "/" + op->name;
    if (!op->backward_input.empty()) {
      last = Chain(
          g, KernelTask(at, name + "/bwd", op->kind, dtype, op->backward_input, Phase::kBackward),
          last);
    }
    if (!op->backward_weight.empty()) {
      last = Chain(
          g,
          KernelTask(at, name + "/wgrad", op->kind, dtype, op->backward_weight, Phase::kBackward),
          last);
    }
  }
  const double freed = layer.activation_bytes + layer.recomputed_bytes;
  if (freed > 0) AddMemory(g, at, layer.name + "/activations", "activations", -freed);
  return last;
}

TaskId AddModelStates(TaskGraph& g, const TaskPlace& at, double params, DType precision,
                      StateSharding sharding, double grad_bytes_per_param) {
  const ModelStateBytes b = AdamStateBytes(params, precision, sharding, grad_bytes_per_param);
  AddMemory(g, at, "weights", "weights", b.weights);
  AddMemory(g, at, "gradients", "gradients", b.gradients);
  return AddMemory(g, at, "optimizer_states", "optimizer", b.optimizer);
}

std::vector<TaskId> AddGroupCollectives(TaskGraph& g, const std::vector<std::vector<int>>& groups,
                                        CollectiveKind kind, double bytes, DType dtype, int stream,
                                        int iteration, const Name& name,
                                        const std::vector<TaskId>& deps,
                                        const std::string& category, Phase phase) {
  std::vector<TaskId> member_of(g.num_ranks(), -1);
  for (const std::vector<int>& ranks : groups) {
    Collective c;
    c.kind = kind;
    c.ranks = ranks;
    c.bytes = bytes;
    c.dtype = dtype;
    Task member;
    member.stream = stream;
    member.iteration = iteration;
    member.phase = phase;
    member.category = category;
    member.name = name;
    const std::vector<TaskId> ids = g.AddCollective(c, member);
    for (size_t i = 0; i < ranks.size(); ++i) {
      member_of[ranks[i]] = ids[i];
      if (deps[ranks[i]] >= 0) g.AddDep(ids[i], deps[ranks[i]]);
    }
  }
  return member_of;
}

double AdamStateBytesPerParam(DType precision) { return AdamStateBytes(1, precision).Total(); }

Task AdamStepTask(double params, DType precision) {
  const double e = TrainingBytesPerParam(precision);
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
