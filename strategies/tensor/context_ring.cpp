// Context parallelism's ring attention, as TensorLayerEmitter emits it (tp_layer.h,
// ContextRing; the planner side is strategies/pipeline/context_parallel.h).
//
// Forward (Megatron-Core's context parallelism over Transformer Engine's point-to-point ring,
// AttnFuncWithCPAndKVP2P; Liu et al. 2023, "Ring Attention with Blockwise Transformers"): step
// j = 0..c-1 computes the partial attention of the rank's s/c queries with the K/V block it
// holds (its own at step 0) while, for j < c-1, it sends that block to the next rank of the
// ring and receives the next one from the previous rank. Step j's kernels wait for the block
// received at step j-1, and a block is passed on once it has arrived, so a transfer shorter
// than a step's compute is hidden behind it and a longer one shows. Each rank sends c-1 blocks:
// (c-1)/c of the K and V of the whole sequence, per layer and micro-batch.
//
// Backward (TE's backward of the same function): the K/V blocks go around the ring again, the
// other way (steps 0..c-2), and each block's gradients dK, dV travel with it, accumulated by
// every rank it visits (steps 1..c-1); the last hop brings them home to their owner, whose QKV
// backward waits for them. Each rank sends c-1 K/V blocks and c-1 dK/dV blocks: twice the
// forward's traffic. A recomputed core (selective or full recomputation) runs its forward ring
// again before the backward.
//
// Each step runs 1/c of the rank's attention core: with the zig-zag split every step holds the
// same work under a causal mask (strategies/pipeline/context_parallel.h). The merging of the
// partial results (softmax statistics) is elementwise on s/c rows and left out. Memory: the
// receive buffers, double-buffered as TE's: two K/V blocks during the forward ring, two K/V and
// two dK/dV blocks during the backward one (category "cp_buffers").
#include <string>

#include "strategies/layer_tasks.h"
#include "strategies/tensor/tp_layer.h"

namespace stratasim {
namespace {

// Whether `op` belongs to the ring of `phase`: a recomputing ring takes only the re-run ops.
bool InRing(const OpCost& op, Phase phase) {
  return op.attention_core && (phase != Phase::kRecompute || op.recomputed);
}

std::string StepName(int j) { return "/ring" + std::to_string(j); }

// Makes last[r] of every rank in `groups` also wait for arrived[r].
void AlsoAfter(TaskGraph& g, const std::vector<std::vector<int>>& groups,
               const std::vector<TaskId>& last, const std::vector<TaskId>& arrived) {
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks) {
      if (last[r] >= 0 && arrived[r] >= 0) g.AddDep(last[r], arrived[r]);
    }
  }
}

}  // namespace

KernelCost TensorLayerEmitter::RingStep(const KernelCost& cost) const {
  const double c = ring_.c;
  KernelCost step = cost;
  step.flops /= c;
  step.bytes /= c;
  if (step.gemm.known()) {
    // The rows are the rank's queries, all of them at every step; the keys are one block's:
    // n of Q K^T and of a fused kernel, k of P V, whichever is not the head dimension.
    if (step.gemm.n != ring_.head_dim) {
      step.gemm.n /= c;
    } else {
      step.gemm.k /= c;
    }
  }
  return step;
}

std::vector<TaskId> TensorLayerEmitter::RingPass(const std::vector<std::vector<int>>& groups,
                                                 int direction, double bytes,
                                                 const std::string& name, int iteration,
                                                 const std::vector<TaskId>& after_a,
                                                 const std::vector<TaskId>& after_b) {
  const int c = ring_.c;
  std::vector<TaskId> received(g_.num_ranks(), -1);
  for (size_t u = 0; u + c <= groups.size(); u += c) {
    for (size_t x = 0; x < groups[u].size(); ++x) {
      for (int k = 0; k < c; ++k) {
        Task send, recv;
        send.iteration = recv.iteration = iteration;
        send.phase = recv.phase = Phase::kCommunication;
        send.category = recv.category = "cp";
        send.stream = ring_.send_stream;
        recv.stream = ring_.recv_stream;
        send.rank = groups[u + k][x];
        recv.rank = groups[u + (k + direction + c) % c][x];
        send.name = Name::Join(prefix_, name + "/send");
        recv.name = Name::Join(prefix_, name + "/recv");
        if (after_a[send.rank] >= 0) send.deps.push_back(after_a[send.rank]);
        if (!after_b.empty() && after_b[send.rank] >= 0) send.deps.push_back(after_b[send.rank]);
        const int to = recv.rank;
        received[to] = g_.AddTransfer(send.rank, to, bytes, send, recv).second;
      }
    }
  }
  return received;
}

void TensorLayerEmitter::RingMemory(const std::string& name, double bytes,
                                    const std::vector<std::vector<int>>& groups, int iteration,
                                    std::vector<TaskId>* last, const std::vector<TaskId>* after) {
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks) {
      const TaskId id =
          AddMemory(g_, TaskPlace{r, stream_, iteration, prefix_}, name, "cp_buffers", bytes);
      if (after != nullptr && (*after)[r] >= 0) g_.AddDep(id, (*after)[r]);
      if (last != nullptr) {
        if ((*last)[r] >= 0) g_.AddDep(id, (*last)[r]);
        (*last)[r] = id;
      }
    }
  }
}

size_t TensorLayerEmitter::RingForward(const LayerCost& L, size_t first, Phase phase,
                                       const std::vector<std::vector<int>>& groups, int iteration,
                                       std::vector<TaskId>& last) {
  size_t end = first;
  while (end < L.ops.size() && InRing(L.ops[end], phase)) ++end;
  const bool again = phase == Phase::kRecompute;
  const std::string kernel = again ? "/recompute" : "/fwd";
  const std::string pass = L.name + (again ? "/cp_kv_recompute" : "/cp_kv");
  RingMemory(L.name + "/cp_buffers", 2 * ring_.kv_bytes, groups, iteration, nullptr, nullptr);
  std::vector<TaskId> received;
  for (int j = 0; j < ring_.c; ++j) {
    const std::vector<TaskId> arrived = std::move(received);  // the block step j computes with
    if (j + 1 < ring_.c) {
      received = RingPass(groups, +1, ring_.kv_bytes, pass + std::to_string(j), iteration,
                          j == 0 ? last : arrived, {});
    }
    bool first_kernel = true;
    for (size_t i = first; i < end; ++i) {
      const OpCost& op = L.ops[i];
      if (op.forward.empty()) continue;
      Kernel(L.name + "/" + op.name + kernel + StepName(j), op, RingStep(op.forward), phase, groups,
             iteration, last);
      if (first_kernel && j > 0) AlsoAfter(g_, groups, last, arrived);
      first_kernel = false;
    }
  }
  RingMemory(L.name + "/cp_buffers", -2 * ring_.kv_bytes, groups, iteration, nullptr, nullptr);
  return end;
}

size_t TensorLayerEmitter::RingBackward(const LayerCost& L, size_t end,
                                        const std::vector<std::vector<int>>& groups, int iteration,
                                        std::vector<TaskId>& last) {
  size_t first = end;
  while (first > 0 && L.ops[first - 1].attention_core) --first;
  const int c = ring_.c;
  const double kv = ring_.kv_bytes;
  RingMemory(L.name + "/cp_buffers", 4 * kv, groups, iteration, nullptr, nullptr);
  std::vector<TaskId> received;
  for (int j = 0; j < c; ++j) {
    const std::vector<TaskId> arrived = std::move(received);
    // The K/V block of the next step (j < c-1) and the dK/dV of the block of step j-1 (j > 0),
    // which waits for that step's kernels.
    const double bytes = (j + 1 < c ? kv : 0) + (j > 0 ? kv : 0);
    received = RingPass(groups, -1, bytes, L.name + "/cp_kv_dkv" + std::to_string(j), iteration,
                        j == 0 ? last : arrived, j == 0 ? std::vector<TaskId>{} : last);
    bool first_kernel = true;
    for (size_t i = end; i-- > first;) {
      const OpCost& op = L.ops[i];
      const std::string name = L.name + "/" + op.name;
      for (const auto& [cost, what] :
           {std::pair<const KernelCost*, const char*>{&op.backward_input, "/bwd"},
            {&op.backward_weight, "/wgrad"}}) {
        if (cost->empty()) continue;
        Kernel(name + what + StepName(j), op, RingStep(*cost), Phase::kBackward, groups, iteration,
               last);
        if (first_kernel && j > 0) AlsoAfter(g_, groups, last, arrived);
        first_kernel = false;
      }
    }
  }
  // The last hop brings each rank its own block's dK and dV, which the QKV backward needs.
  RingMemory(L.name + "/cp_buffers", -4 * kv, groups, iteration, &last, &received);
  return first;
}

}  // namespace stratasim
