#include "strategies/tensor/tp_layer.h"

#include <set>

#include "strategies/layer_tasks.h"

namespace stratasim {
namespace {

const std::set<std::string> kColumnParallel = {"qkv", "mlp_up", "gate_up", "logits"};
const std::set<std::string> kRowParallel = {"proj", "mlp_down", "down", "embed"};

}  // namespace

bool IsColumnParallel(const OpCost& op) { return kColumnParallel.count(op.name) > 0; }
bool IsRowParallel(const OpCost& op) { return kRowParallel.count(op.name) > 0; }

void CheckTensorDegree(const ModelSpec& m, int t, const OptionReader& opt, const std::string& key) {
  if (m.kind != "gpt" && m.kind != "bert" && m.kind != "llama") {
    throw opt.Fail(key, "tensor parallelism splits transformer layers: model kind \"" + m.kind +
                            "\" is not supported (gpt, bert, llama)");
  }
  const std::string td = "tensor degree t=" + std::to_string(t);
  if (m.heads % t != 0) {
    throw opt.Fail(
        key, td + " must divide the model's attention heads (" + std::to_string(m.heads) + ")");
  }
  if (m.kv_heads > 0 && m.kv_heads % t != 0) {
    throw opt.Fail(
        key, td + " must divide the model's key/value heads (" + std::to_string(m.kv_heads) + ")");
  }
}

void TensorLayerEmitter::Comm(CollectiveKind kind, const std::vector<std::vector<int>>& groups,
                              int iteration, const std::string& name, Phase phase,
                              std::vector<TaskId>& last) {
  if (groups.empty() || groups.front().size() < 2) return;  // t = 1: nothing to exchange
  const std::vector<TaskId> member_of =
      AddGroupCollectives(g_, groups, kind, comm_bytes_, dtype_, stream_, iteration,
                          Name::Join(prefix_, name), last, "tp", phase);
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks) last[r] = member_of[r];
  }
}

void TensorLayerEmitter::Kernel(const std::string& name, const OpCost& op, const KernelCost& cost,
                                Phase phase, const std::vector<std::vector<int>>& groups,
                                int iteration, std::vector<TaskId>& last) {
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks) {
      Task t;
      t.kind = TaskKind::kCompute;
      t.rank = r;
      t.stream = stream_;
      t.iteration = iteration;
      t.phase = phase;
      t.name = Name::Join(prefix_, name);
      t.op = op.kind;
      t.dtype = dtype_;
      t.flops = cost.flops;
      t.bytes = cost.bytes;
      t.gemm = cost.gemm;
      if (last[r] >= 0) t.deps.push_back(last[r]);
      last[r] = g_.Add(std::move(t));
    }
  }
}

void TensorLayerEmitter::Memory(const std::string& name, double bytes,
                                const std::vector<std::vector<int>>& groups, int iteration) {
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks)
      AddMemory(g_, TaskPlace{r, stream_, iteration, prefix_}, name, "activations", bytes);
  }
}

void TensorLayerEmitter::OpForward(const std::string& name, const OpCost& op, Phase phase,
                                   const std::vector<std::vector<int>>& groups, int iteration,
                                   std::vector<TaskId>& last) {
  if (sp_ && IsColumnParallel(op)) {
    Comm(CollectiveKind::kAllGather, groups, iteration, name + "/tp_all_gather", phase, last);
  }
  Kernel(name + (phase == Phase::kRecompute ? "/recompute" : "/fwd"), op, op.forward, phase, groups,
         iteration, last);
  if (IsRowParallel(op)) {
    Comm(sp_ ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, groups, iteration,
         name + (sp_ ? "/tp_reduce_scatter" : "/tp_all_reduce"), phase, last);
  }
}

void TensorLayerEmitter::Forward(const LayerCost& L, const std::vector<std::vector<int>>& groups,
                                 int iteration, const std::string& prefix,
                                 std::vector<TaskId>& last) {
  prefix_ = prefix;
  for (size_t i = 0; i < L.ops.size(); ++i) {
    const OpCost& op = L.ops[i];
    if (ring_.c > 1 && op.attention_core) {  // context parallelism: the core runs as a ring
      i = RingForward(L, i, Phase::kForward, groups, iteration, last) - 1;
      continue;
    }
    if (op.forward.empty()) continue;
    OpForward(L.name + "/" + op.name, op, Phase::kForward, groups, iteration, last);
  }
  if (L.activation_bytes > 0) {
    Memory(L.name + "/activations", L.activation_bytes, groups, iteration);
  }
}

void TensorLayerEmitter::Backward(const LayerCost& L, const std::vector<std::vector<int>>& groups,
                                  int iteration, const std::string& prefix,
                                  std::vector<TaskId>& last) {
  prefix_ = prefix;
  if (L.recomputed_bytes > 0) {
    Memory(L.name + "/recomputed", L.recomputed_bytes, groups, iteration);
  }
  for (size_t i = 0; i < L.ops.size(); ++i) {
    const OpCost& op = L.ops[i];
    if (ring_.c > 1 && op.attention_core && op.recomputed) {  // the forward ring again
      i = RingForward(L, i, Phase::kRecompute, groups, iteration, last) - 1;
      continue;
    }
    if (op.recomputed && !op.forward.empty()) {
      OpForward(L.name + "/" + op.name, op, Phase::kRecompute, groups, iteration, last);
    }
  }
  for (auto op = L.ops.rbegin(); op != L.ops.rend(); ++op) {
    if (ring_.c > 1 && op->attention_core) {  // the run of core ops ending here, as a ring
      const size_t first = RingBackward(L, L.ops.rend() - op, groups, iteration, last);
      op = L.ops.rend() - static_cast<std::ptrdiff_t>(first) - 1;
      continue;
    }
    const std::string name = L.name + "/" + op->name;
    if (sp_ && IsRowParallel(*op)) {
      Comm(CollectiveKind::kAllGather, groups, iteration, name + "/tp_grad_all_gather",
           Phase::kBackward, last);
    }
    if (!op->backward_input.empty()) {
      Kernel(name + "/bwd", *op, op->backward_input, Phase::kBackward, groups, iteration, last);
    }
    if (IsColumnParallel(*op)) {
      Comm(sp_ ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, groups, iteration,
           name + (sp_ ? "/tp_grad_reduce_scatter" : "/tp_grad_all_reduce"), Phase::kBackward,
           last);
    }
    if (!op->backward_weight.empty()) {
      Kernel(name + "/wgrad", *op, op->backward_weight, Phase::kBackward, groups, iteration, last);
    }
  }
  const double freed = L.activation_bytes + L.recomputed_bytes;
  if (freed > 0) Memory(L.name + "/activations", -freed, groups, iteration);
}

}  // namespace stratasim
