// Merak's sub-pipelined tensor parallelism (tp_layer.h, TensorLayerEmitter::SubPipeline): a
// transformer layer's kernels run as two halves of the micro-batch's tokens so that the
// all-reduce of one half overlaps the other half's compute.
//
// Every half kernel follows the previous kernel of its half and, being on the one compute
// stream, every kernel emitted before it; each all-reduce follows its half's last kernel, on
// the sub-pipeline's communication stream. The second half is emitted after the first, so its
// last task ends after everything the layer emitted: it is what `last` becomes, and what the
// next layer, a pipeline send or a gradient bucket waits for.
#include "core/error.h"
#include "strategies/layer_tasks.h"
#include "strategies/tensor/tp_layer.h"

namespace stratasim {
namespace {

std::string HalfName(int half) { return "/half" + std::to_string(half); }

// Half of kernel `c` of `op`: half the sequences x heads of an attention product, half the rows
// of another GEMM (its weight read whole by each half), else half the work.
KernelCost Half(const OpCost& op, const KernelCost& c) {
  const bool attention = op.kind == OpKind::kAttention || op.kind == OpKind::kFusedAttention;
  if (attention && c.gemm.known() && c.gemm.batch >= 2) {
    KernelCost half = c;
    half.flops /= 2;
    half.bytes /= 2;
    half.gemm.batch /= 2;
    return half;
  }
  if (c.gemm.known()) return GemmRowChunk(c, 2);
  KernelCost half = c;
  half.flops /= 2;
  half.bytes /= 2;
  return half;
}

}  // namespace

void TensorLayerEmitter::SubPipeline(int level) {
  if (level < 0 || level > 3) {
    throw Error("sub-pipelined tensor parallelism has levels 0 to 3, not " + std::to_string(level));
  }
  if (level > 0 && (sp_ || overlap_ || ring_.c > 1)) {
    throw Error(
        "sub-pipelined tensor parallelism does not combine with sequence parallelism, "
        "tp_comm_overlap or context parallelism");
  }
  sub_level_ = level;
  if (level == 0) return;
  sub_comm_stream_ = g_.Stream("tp_subpipe");
  if (level == 3) sub_compute_stream_ = g_.Stream("tp_subpipe_compute");
}

bool TensorLayerEmitter::SubPipelined(const LayerCost& layer,
                                      const std::vector<std::vector<int>>& groups) const {
  return sub_level_ > 0 && layer.recomputable && !groups.empty() && groups.front().size() >= 2;
}

void TensorLayerEmitter::HalfAllReduce(const std::vector<std::vector<int>>& groups, int iteration,
                                       const std::string& name, Phase phase,
                                       std::vector<TaskId>& after) {
  const std::vector<TaskId> member_of = AddGroupCollectives(
      g_, groups, CollectiveKind::kAllReduce, comm_bytes_ / 2, dtype_, sub_comm_stream_, iteration,
      Name::Join(prefix_, name), after, "tp", phase);
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks) after[r] = member_of[r];
  }
}

TaskId TensorLayerEmitter::Interfere(int r, const std::string& name, OpKind kind,
                                     const KernelCost& cost, int iteration, TaskId after,
                                     int stream) {
  if (sm_interference_ <= 0) return after;
  // The same kernel shape, so the same achieved efficiency: about sm_interference_ times the
  // kernel's time (plus one launch).
  KernelCost extra = cost;
  extra.flops *= sm_interference_;
  extra.bytes *= sm_interference_;
  Task k;
  k.kind = TaskKind::kCompute;
  k.rank = r;
  k.stream = stream >= 0 ? stream : stream_;
  k.iteration = iteration;
  k.phase = Phase::kOther;  // no model FLOPs
  k.name = Name::Join(prefix_, name + "/sm_interference");
  k.category = Name("sm_interference");
  k.op = kind;
  k.dtype = cost.dtype.value_or(dtype_);
  k.flops = extra.flops;
  k.bytes = extra.bytes;
  k.gemm = extra.gemm;
  k.causal = extra.causal;
  k.deps.push_back(after);
  return g_.Add(std::move(k));
}

void TensorLayerEmitter::SplitGemmAllReduce(const std::string& comm_name, const std::string& name,
                                            const OpCost& op, const KernelCost& cost, Phase phase,
                                            const std::vector<std::vector<int>>& groups,
                                            int iteration, std::vector<TaskId>& last,
                                            const KernelCost& between,
                                            const std::string& between_name) {
  const KernelCost half = GemmRowChunk(cost, 2);
  std::vector<TaskId> compute = last, reduced = last;
  for (int h = 0; h < 2; ++h) {
    for (const std::vector<int>& ranks : groups) {
      for (int r : ranks) {
        compute[r] =
            AddKernel(r, name + HalfName(h), op.kind, half, phase, iteration, {compute[r]});
        reduced[r] = compute[r];
      }
    }
    HalfAllReduce(groups, iteration, comm_name + HalfName(h), phase, reduced);
    if (h == 0 && !between.empty()) {
      for (const std::vector<int>& ranks : groups) {
        for (int r : ranks) {
          compute[r] = AddKernel(r, between_name, op.kind, between, phase, iteration, {compute[r]});
        }
      }
    }
  }
  // The second all-reduce follows the second half, which follows everything else on the
  // compute stream, and the first all-reduce on its stream.
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks) last[r] = reduced[r];
  }
}

bool TensorLayerEmitter::Continues(const HalfChains& chains,
                                   const std::vector<std::vector<int>>& groups,
                                   const std::vector<TaskId>& last,
                                   std::vector<TaskId>& first) const {
  if (chains.exit.size() != last.size()) return false;
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks) {
      if (chains.exit[r] < 0 || chains.exit[r] != last[r]) return false;
    }
  }
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks) first[r] = chains.first_half[r];
  }
  return true;
}

void TensorLayerEmitter::HalvesForward(const LayerCost& L, Phase phase,
                                       const std::vector<std::vector<int>>& groups, int iteration,
                                       std::vector<TaskId>& last) {
  // Level 3 carries the halves from layer to layer in the forward (a recomputation runs one
  // layer at a time, just before its backward).
  const bool cross = sub_level_ == 3 && phase == Phase::kForward;
  std::vector<TaskId> h[2] = {last, last};
  // Whether the all-reduce of half 1 that ended the previous segment is still in flight.
  bool carried = cross && Continues(sub_forward_, groups, last, h[0]) && sub_forward_.in_flight;
  // Oases: a recomputation without collectives right after a backward needs no gradient: both
  // halves follow the compute stream, beside the backward's last all-reduce.
  const bool after_backward = sub_level_ == 3 && phase == Phase::kRecompute && overlap_recompute_ &&
                              Continues(sub_backward_, groups, last, h[0]);
  if (after_backward) {
    h[1] = h[0];
    carried = sub_backward_.in_flight;
  }
  std::vector<const OpCost*> ops;
  for (const OpCost& op : L.ops) {
    if (!op.forward.empty() && (phase == Phase::kForward || op.recomputed)) ops.push_back(&op);
  }
  const std::string kind = phase == Phase::kRecompute ? "/recompute" : "/fwd";
  // Segments end with a row-parallel GEMM, whose output each half all-reduces (Merak's fp1-fp6:
  // attention of half 0, of half 1, MLP of half 0, of half 1, then the residual).
  for (size_t begin = 0; begin < ops.size();) {
    size_t end = begin;
    while (end < ops.size() && !IsRowParallel(*ops[end])) ++end;
    const bool reduce = end < ops.size();
    if (reduce) ++end;
    for (int half = 0; half < 2; ++half) {
      // Level 3: the second half's kernels after the layer's last all-reduce run on a stream of
      // their own, beside the first half's next layer; they end after the first half's.
      const bool side = cross && !reduce && half == 1;
      // Half 1 runs beside half 0's all-reduce of this segment; half 0 beside half 1's of the
      // segment before.
      const bool overlapped = half == 0 ? carried : reduce;
      const int stream = side ? sub_compute_stream_ : -1;
      for (size_t k = begin; k < end; ++k) {
        const OpCost& op = *ops[k];
        const KernelCost cost = Half(op, op.forward);
        const std::string name = L.name + "/" + op.name + kind + HalfName(half);
        for (const std::vector<int>& ranks : groups) {
          for (int r : ranks) {
            std::vector<TaskId> deps = {h[half][r]};
            if (side) deps.push_back(h[0][r]);
            h[half][r] = AddKernel(r, name, op.kind, cost, phase, iteration, deps, stream);
            if (overlapped) {
              h[half][r] = Interfere(r, name, op.kind, cost, iteration, h[half][r], stream);
            }
          }
        }
      }
      if (reduce) {
        HalfAllReduce(groups, iteration,
                      L.name + "/" + ops[end - 1]->name + "/tp_all_reduce" + HalfName(half), phase,
                      h[half]);
      }
      if (half == 1) carried = reduce;
    }
    begin = end;
  }
  if (after_backward) {
    // The backward goes on: its first half after the recomputation, its second half after its
    // last all-reduce as before (`last` is unchanged).
    sub_backward_.first_half = h[1];
    sub_backward_.in_flight = false;
    return;
  }
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks) last[r] = h[1][r];
  }
  if (cross) sub_forward_ = HalfChains{h[0], h[1], carried};
}

void TensorLayerEmitter::HalvesBackward(const LayerCost& L,
                                        const std::vector<std::vector<int>>& groups, int iteration,
                                        std::vector<TaskId>& last) {
  const bool cross = sub_level_ == 3;
  std::vector<TaskId> h[2] = {last, last};
  bool carried = cross && Continues(sub_backward_, groups, last, h[0]) && sub_backward_.in_flight;
  std::vector<const OpCost*> ops;  // in backward order
  for (auto op = L.ops.rbegin(); op != L.ops.rend(); ++op) {
    if (!op->backward_input.empty() || !op->backward_weight.empty() || IsColumnParallel(*op)) {
      ops.push_back(&*op);
    }
  }
  // Segments end with a column-parallel op, whose input gradient each half all-reduces.
  for (size_t begin = 0; begin < ops.size();) {
    size_t end = begin;
    while (end < ops.size() && !IsColumnParallel(*ops[end])) ++end;
    const bool reduce = end < ops.size();
    if (reduce) ++end;
    for (int half = 0; half < 2; ++half) {
      const bool side = cross && !reduce && half == 1;
      const int stream = side ? sub_compute_stream_ : -1;
      // The second half's all-reduce ending the layer must follow its weight gradient, which
      // otherwise runs while the all-reduce does.
      const bool wgrad_first = reduce && end == ops.size() && half == 1;
      const bool overlapped = half == 0 ? carried : reduce;  // as in HalvesForward
      auto kernel = [&](const OpCost& op, const KernelCost& c, const std::string& what) {
        if (c.empty()) return;
        const KernelCost cost = Half(op, c);
        const std::string name = L.name + "/" + op.name + what + HalfName(half);
        for (const std::vector<int>& ranks : groups) {
          for (int r : ranks) {
            std::vector<TaskId> deps = {h[half][r]};
            if (side) deps.push_back(h[0][r]);
            h[half][r] =
                AddKernel(r, name, op.kind, cost, Phase::kBackward, iteration, deps, stream);
            if (overlapped) {
              h[half][r] = Interfere(r, name, op.kind, cost, iteration, h[half][r], stream);
            }
          }
        }
      };
      for (size_t k = begin; k < end; ++k) {
        const OpCost& op = *ops[k];
        if (!(reduce && k + 1 == end)) {
          kernel(op, op.backward_input, "/bwd");
          kernel(op, op.backward_weight, "/wgrad");
          continue;
        }
        if (wgrad_first) kernel(op, op.backward_weight, "/wgrad");
        kernel(op, op.backward_input, "/bwd");
        const std::vector<TaskId> input_grad = h[half];
        HalfAllReduce(groups, iteration,
                      L.name + "/" + op.name + "/tp_grad_all_reduce" + HalfName(half),
                      Phase::kBackward, h[half]);
        if (!wgrad_first && !op.backward_weight.empty()) {
          // While the all-reduce runs; the next kernel follows both (stream order and `h`).
          const KernelCost cost = Half(op, op.backward_weight);
          const std::string name = L.name + "/" + op.name + "/wgrad" + HalfName(half);
          for (const std::vector<int>& ranks : groups) {
            for (int r : ranks) {
              const TaskId wgrad =
                  AddKernel(r, name, op.kind, cost, Phase::kBackward, iteration, {input_grad[r]});
              Interfere(r, name, op.kind, cost, iteration, wgrad, -1);  // beside its all-reduce
            }
          }
        }
      }
      if (half == 1) carried = reduce;
    }
    begin = end;
  }
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks) last[r] = h[1][r];
  }
  if (cross) sub_backward_ = HalfChains{h[0], h[1], carried};
}

}  // namespace stratasim
