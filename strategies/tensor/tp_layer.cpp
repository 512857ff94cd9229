#include "strategies/tensor/tp_layer.h"

#include <set>

#include "strategies/layer_tasks.h"

namespace stratasim {
namespace {

const std::set<std::string> kColumnParallel = {"qkv", "mlp_up", "gate_up", "logits"};
const std::set<std::string> kRowParallel = {"proj", "mlp_down", "down", "embed"};

KernelCost RowChunk(const KernelCost& c, double t) { return GemmRowChunk(c, t); }

std::string Step(int i) { return "/chunk" + std::to_string(i); }

}  // namespace

KernelCost GemmRowChunk(const KernelCost& c, double t) {
  const GemmShape& s = c.gemm;
  const double e = c.bytes / (s.batch * (s.m * s.k + s.k * s.n + s.m * s.n));
  KernelCost part = c;
  part.flops = c.flops / t;
  part.gemm.m = s.m / t;
  part.bytes = e * s.batch * (s.m / t * s.k + s.k * s.n + s.m / t * s.n);
  return part;
}

OptionSpec TpCommOverlapOption() {
  return Flag("tp_comm_overlap",
              "needs sequence_parallel: each all-gather before a column-parallel GEMM and each "
              "reduce-scatter after a row-parallel GEMM (and their backward counterparts) is "
              "split into t chunks sent point to point while the GEMM runs chunk by chunk "
              "(Transformer Engine's userbuffers overlap, Megatron's --tp-comm-overlap; Wang et "
              "al. 2023)")
      .Default("false");
}

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
    for (int r : ranks) last[r] = AddKernel(r, name, op.kind, cost, phase, iteration, {last[r]});
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
  const std::string kernel = name + (phase == Phase::kRecompute ? "/recompute" : "/fwd");
  if (sp_ && Overlapped(op.forward, groups)) {
    if (IsColumnParallel(op)) {
      AllGatherGemm(name + "/tp_all_gather", kernel, op, op.forward, phase, groups, iteration,
                    last);
      return;
    }
    if (IsRowParallel(op)) {
      GemmReduceScatter(name + "/tp_reduce_scatter", kernel, op, op.forward, phase, groups,
                        iteration, last);
      return;
    }
  }
  if (sub_layer_ && sub_level_ == 1 && IsRowParallel(op) && op.forward.gemm.known()) {
    SplitGemmAllReduce(name + "/tp_all_reduce", kernel, op, op.forward, phase, groups, iteration,
                       last);
    return;
  }
  if (sp_ && IsColumnParallel(op)) {
    Comm(CollectiveKind::kAllGather, groups, iteration, name + "/tp_all_gather", phase, last);
  }
  Kernel(kernel, op, op.forward, phase, groups, iteration, last);
  if (IsRowParallel(op)) {
    Comm(sp_ ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, groups, iteration,
         name + (sp_ ? "/tp_reduce_scatter" : "/tp_all_reduce"), phase, last);
  }
}

void TensorLayerEmitter::Forward(const LayerCost& L, const std::vector<std::vector<int>>& groups,
                                 int iteration, const std::string& prefix,
                                 std::vector<TaskId>& last) {
  prefix_ = prefix;
  sub_layer_ = SubPipelined(L, groups);
  if (sub_layer_ && sub_level_ >= 2) {
    HalvesForward(L, Phase::kForward, groups, iteration, last);
  } else {
    for (size_t i = 0; i < L.ops.size(); ++i) {
      const OpCost& op = L.ops[i];
      if (ring_.c > 1 && op.attention_core) {  // context parallelism: the core runs as a ring
        i = RingForward(L, i, Phase::kForward, groups, iteration, last) - 1;
        continue;
      }
      if (op.forward.empty()) continue;
      OpForward(L.name + "/" + op.name, op, Phase::kForward, groups, iteration, last);
    }
  }
  if (L.activation_bytes > 0) {
    Memory(L.name + "/activations", L.activation_bytes, groups, iteration);
  }
}

void TensorLayerEmitter::Recompute(const LayerCost& L, const std::vector<std::vector<int>>& groups,
                                   int iteration, const std::string& prefix,
                                   std::vector<TaskId>& last) {
  prefix_ = prefix;
  sub_layer_ = SubPipelined(L, groups);
  if (L.recomputed_bytes > 0) {
    Memory(L.name + "/recomputed", L.recomputed_bytes, groups, iteration);
  }
  if (sub_layer_ && sub_level_ >= 2) {
    HalvesForward(L, Phase::kRecompute, groups, iteration, last);
    return;
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
}

void TensorLayerEmitter::Backward(const LayerCost& L, const std::vector<std::vector<int>>& groups,
                                  int iteration, const std::string& prefix,
                                  std::vector<TaskId>& last, bool recomputed) {
  if (!recomputed) Recompute(L, groups, iteration, prefix, last);
  prefix_ = prefix;
  sub_layer_ = SubPipelined(L, groups);
  if (sub_layer_ && sub_level_ >= 2) {
    HalvesBackward(L, groups, iteration, last);
  } else {
    BackwardOps(L, groups, iteration, last);
  }
  const double freed = L.activation_bytes + L.recomputed_bytes;
  if (freed > 0) Memory(L.name + "/activations", -freed, groups, iteration);
}

void TensorLayerEmitter::BackwardOps(const LayerCost& L,
                                     const std::vector<std::vector<int>>& groups, int iteration,
                                     std::vector<TaskId>& last) {
  for (auto op = L.ops.rbegin(); op != L.ops.rend(); ++op) {
    if (ring_.c > 1 && op->attention_core) {  // the run of core ops ending here, as a ring
      const size_t first = RingBackward(L, L.ops.rend() - op, groups, iteration, last);
      op = L.ops.rend() - static_cast<std::ptrdiff_t>(first) - 1;
      continue;
    }
    const std::string name = L.name + "/" + op->name;
    if (sp_ && IsRowParallel(*op) && Overlapped(op->backward_input, groups)) {
      AllGatherGemm(name + "/tp_grad_all_gather", name + "/bwd", *op, op->backward_input,
                    Phase::kBackward, groups, iteration, last);
    } else if (sp_ && IsColumnParallel(*op) && Overlapped(op->backward_input, groups)) {
      GemmReduceScatter(name + "/tp_grad_reduce_scatter", name + "/bwd", *op, op->backward_input,
                        Phase::kBackward, groups, iteration, last);
    } else if (sub_layer_ && sub_level_ == 1 && IsColumnParallel(*op) &&
               op->backward_input.gemm.known()) {
      // Level 1: the weight gradient between the halves, so that the second half's all-reduce
      // ends the op.
      SplitGemmAllReduce(name + "/tp_grad_all_reduce", name + "/bwd", *op, op->backward_input,
                         Phase::kBackward, groups, iteration, last, op->backward_weight,
                         name + "/wgrad");
      continue;
    } else {
      BackwardInput(name, *op, groups, iteration, last);
    }
    if (!op->backward_weight.empty()) {
      Kernel(name + "/wgrad", *op, op->backward_weight, Phase::kBackward, groups, iteration, last);
    }
  }
}

void TensorLayerEmitter::BackwardInput(const std::string& name, const OpCost& op,
                                       const std::vector<std::vector<int>>& groups, int iteration,
                                       std::vector<TaskId>& last) {
  if (sp_ && IsRowParallel(op)) {
    Comm(CollectiveKind::kAllGather, groups, iteration, name + "/tp_grad_all_gather",
         Phase::kBackward, last);
  }
  if (!op.backward_input.empty()) {
    Kernel(name + "/bwd", op, op.backward_input, Phase::kBackward, groups, iteration, last);
  }
  if (IsColumnParallel(op)) {
    Comm(sp_ ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, groups, iteration,
         name + (sp_ ? "/tp_grad_reduce_scatter" : "/tp_grad_all_reduce"), Phase::kBackward, last);
  }
}

bool TensorLayerEmitter::Overlapped(const KernelCost& cost,
                                    const std::vector<std::vector<int>>& groups) const {
  return overlap_ && cost.gemm.known() && !groups.empty() && groups.front().size() >= 2;
}

std::pair<TaskId, TaskId> TensorLayerEmitter::Chunk(int from, int to, double bytes,
                                                    const std::string& name, Phase phase,
                                                    int iteration, TaskId dep) {
  Task send, recv;
  send.iteration = recv.iteration = iteration;
  send.phase = recv.phase = phase;
  send.category = recv.category = "tp";
  send.stream = g_.Stream("tp_send");
  recv.stream = g_.Stream("tp_recv");
  send.name = recv.name = Name::Join(prefix_, name);
  if (dep >= 0) send.deps.push_back(dep);
  return g_.AddTransfer(from, to, bytes, send, recv);
}

TaskId TensorLayerEmitter::AddKernel(int r, const std::string& name, OpKind kind,
                                     const KernelCost& cost, Phase phase, int iteration,
                                     const std::vector<TaskId>& deps, int stream) {
  Task k;
  k.kind = TaskKind::kCompute;
  k.rank = r;
  k.stream = stream >= 0 ? stream : stream_;
  k.iteration = iteration;
  k.phase = phase;
  k.name = Name::Join(prefix_, name);
  k.op = kind;
  k.dtype = cost.dtype.value_or(dtype_);  // an FP8 GEMM's chunks run in FP8 too
  k.flops = cost.flops;
  k.bytes = cost.bytes;
  k.gemm = cost.gemm;
  k.causal = cost.causal;
  for (TaskId d : deps) {
    if (d >= 0) k.deps.push_back(d);
  }
  return g_.Add(std::move(k));
}

void TensorLayerEmitter::AllGatherGemm(const std::string& comm_name, const std::string& name,
                                       const OpCost& op, const KernelCost& cost, Phase phase,
                                       const std::vector<std::vector<int>>& groups, int iteration,
                                       std::vector<TaskId>& last) {
  // Ring exchange: at step i the rank at position x holds the chunk of position x - i, runs the
  // GEMM on it and passes it on to x + 1 (which needs it at step i + 1).
  const int t = static_cast<int>(groups.front().size());
  const KernelCost part = RowChunk(cost, t);
  std::vector<TaskId> held(last.size(), -1);  // per rank: the chunk received for this step
  for (int i = 0; i < t; ++i) {
    std::vector<TaskId> received(last.size(), -1);
    for (const std::vector<int>& ranks : groups) {
      for (int x = 0; x < t; ++x) {
        const int r = ranks[x], next = ranks[(x + 1) % t];
        const TaskId input = i == 0 ? last[r] : held[r];
        if (i + 1 < t) {
          received[next] =
              Chunk(r, next, comm_bytes_ / t, comm_name + Step(i), phase, iteration, input).second;
        }
        std::vector<TaskId> deps = {last[r]};
        if (input != last[r]) deps.push_back(input);
        last[r] = AddKernel(r, name + Step(i), op.kind, part, phase, iteration, deps);
      }
    }
    held = received;
  }
}

void TensorLayerEmitter::GemmReduceScatter(const std::string& comm_name, const std::string& name,
                                           const OpCost& op, const KernelCost& cost, Phase phase,
                                           const std::vector<std::vector<int>>& groups,
                                           int iteration, std::vector<TaskId>& last) {
  // At step i < t - 1 the rank at position x computes the output rows owned by position
  // x + i + 1 and sends them there; at step t - 1 its own; then it sums the t partial chunks.
  const int t = static_cast<int>(groups.front().size());
  const KernelCost part = RowChunk(cost, t);
  std::vector<std::vector<TaskId>> partials(last.size());  // per rank: the chunks received
  for (int i = 0; i < t; ++i) {
    for (const std::vector<int>& ranks : groups) {
      for (int x = 0; x < t; ++x) {
        const int r = ranks[x];
        last[r] = AddKernel(r, name + Step(i), op.kind, part, phase, iteration, {last[r]});
        if (i + 1 < t) {
          const int owner = ranks[(x + i + 1) % t];
          partials[owner].push_back(
              Chunk(r, owner, comm_bytes_ / t, comm_name + Step(i), phase, iteration, last[r])
                  .second);
        }
      }
    }
  }
  // The reduction reads the t partial chunks and writes the sum (TE sums them in one kernel).
  const double chunk_elements = comm_bytes_ / t / BytesPerElement(dtype_);
  KernelCost sum;
  sum.flops = (t - 1) * chunk_elements;
  sum.bytes = (t + 1) * comm_bytes_ / t;
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks) {
      std::vector<TaskId> deps = partials[r];
      deps.push_back(last[r]);
      last[r] = AddKernel(r, comm_name + "/sum", OpKind::kElementwise, sum, phase, iteration, deps);
    }
  }
}

}  // namespace stratasim
