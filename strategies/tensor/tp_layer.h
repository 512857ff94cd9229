// The tasks of a transformer layer run by a tensor-parallel group: every rank of the group
// runs its shard of each kernel (TensorParallelShard, strategies/tensor/megatron.h) and the
// group communicates where Megatron-LM's f and g operators sit (Shoeybi et al. 2019, §3,
// Figure 3): an all-reduce of b*s*h elements after each row-parallel GEMM in the forward pass
// and of each column-parallel GEMM's input gradient in the backward pass. With sequence
// parallelism (Korthikanti et al. 2022, §4.2.2) each all-reduce becomes a reduce-scatter, and
// an all-gather precedes each column-parallel GEMM (forward) and each row-parallel GEMM's
// backward.
//
// The collectives sit on the compute stream, since the next kernel needs their result: tensor
// parallel communication is exposed (category "tp"). Used by the tensor-parallel planner and by
// pipeline stages that are tensor-parallel (3D parallelism).
//
// With OverlapCommunication() (option tp_comm_overlap; Transformer Engine's userbuffers
// comm-GEMM overlap, Megatron's --tp-comm-overlap; Wang et al. 2023, "Overlap Communication
// with Dependent Computation via Decomposition in Large Deep Learning Models", ASPLOS), each
// sequence-parallel all-gather and the GEMM that consumes it, and each GEMM and the
// reduce-scatter of its output, are decomposed into t steps along the GEMM's rows (the
// sequence), as TE's point-to-point overlaps do:
//   all-gather + GEMM (TE's ring exchange, split_overlap_ag_p2p): at step i each rank runs the
//     GEMM on the sequence chunk it holds (its own at step 0) while sending that chunk on to
//     the next rank of the ring; t GEMM chunks, t - 1 ring transfers of 1/t of the tensor;
//   GEMM + reduce-scatter (TE's split_overlap_rs_p2p): each rank computes the output rows of
//     every other rank's chunk first, sending each to its owner as soon as it is done, then its
//     own; a reduction kernel sums the t partial chunks.
// The transfers run on streams of their own ("tp_send", "tp_recv"), so a layer takes about
// max(GEMM, communication) plus one chunk of the other; SimGrid resolves the overlap and the
// links' sharing. Each rank sends (t-1)/t of the tensor, as the ring collective does.
// Simplified: the SMs the communication kernels take from the GEMMs are not charged.
#ifndef STRATASIM_STRATEGIES_TENSOR_TP_LAYER_H_
#define STRATASIM_STRATEGIES_TENSOR_TP_LAYER_H_

#include <string>
#include <utility>
#include <vector>

#include "core/scenario.h"
#include "core/strategy_options.h"
#include "core/task_graph.h"
#include "models/workload.h"

namespace stratasim {

// Megatron-LM's split of a transformer layer, by op name (models/transformer.cpp, gpt.cpp).
bool IsColumnParallel(const OpCost& op);  // qkv, mlp_up, gate_up, logits
bool IsRowParallel(const OpCost& op);     // proj, mlp_down, down, embed (vocabulary-parallel)

// 1/parts of GEMM `c` along its rows (m, the tokens): the activation and output rows split, the
// weight (B[k, n]) read whole by every part.
KernelCost GemmRowChunk(const KernelCost& c, double parts);

// The option `tp_comm_overlap` of the tensor and 3d kinds.
OptionSpec TpCommOverlapOption();

// Checks that tensor degree `t` can split `model` (a transformer whose attention and
// key/value heads t divides); throws opt.Fail(key, rule) otherwise.
void CheckTensorDegree(const ModelSpec& model, int t, const OptionReader& opt,
                       const std::string& key);

// Context parallelism's ring attention (Liu et al. 2023; Megatron-Core with Transformer Engine's
// AttnFuncWithCPAndKVP2P), emitted by TensorLayerEmitter when set (strategies/tensor/
// context_ring.cpp; the 3d planner's `context` option, strategies/pipeline/context_parallel.h).
// The groups given to Forward and Backward then come in runs of `c` tensor groups, run u's
// k-th group holding part k of the same sequences: tensor index x of the run's groups forms a
// ring of c ranks. The attention core of a layer (its consecutive ops flagged attention_core)
// runs as c steps, each 1/c of the rank's core, while the K/V blocks travel around the ring on
// the streams below, point to point.
struct ContextRing {
  int c = 1;  // ranks of a ring; 1: no ring
  // One rank's K/V block: K and V of its s/c tokens (its tensor shard's heads), in bytes.
  double kv_bytes = 0;
  // The head dimension, which tells the key dimension of an attention product's shape.
  double head_dim = 0;
  int send_stream = -1, recv_stream = -1;
};

class TensorLayerEmitter {
 public:
  // `comm_bytes`: the size of one tensor-parallel collective (b*s*h elements of `dtype`).
  TensorLayerEmitter(TaskGraph& g, DType dtype, int stream, bool sequence_parallel,
                     double comm_bytes)
      : g_(g), dtype_(dtype), stream_(stream), sp_(sequence_parallel), comm_bytes_(comm_bytes) {}

  // Pipelines each sequence-parallel all-gather and reduce-scatter with its GEMM (above).
  void OverlapCommunication() { overlap_ = true; }
  // Resizes the tensor-parallel collectives, for micro-batches of another size.
  void SetCommBytes(double comm_bytes) { comm_bytes_ = comm_bytes; }

  // Merak's sub-pipelined tensor parallelism (Lai et al. 2023, TPDS, §4.3; tp_subpipeline.cpp),
  // in transformer layers whose tensor group has 2 GPUs or more; `level` 0 is off:
  //   1  each row-parallel GEMM of the forward and each column-parallel input-gradient GEMM of
  //      the backward runs as two halves of the tokens, and the all-reduce of the first half
  //      runs while the second half computes (Merak's PipedRow/ColumnParallelLinear);
  //   2  the whole layer runs as two sub-micro-batches: the all-reduce closing one half's
  //      attention (MLP) overlaps the other half's attention (MLP) (Merak's PipedTPFunction);
  //   3  as 2, across consecutive layers: the first half of the next layer starts when the
  //      first half of this one is done, hiding the second half's last all-reduce (Merak's
  //      CrossLayerPipedTPFunction). The second half's final elementwise kernels run on a
  //      compute stream of their own ("tp_subpipe_compute") so that they do not hold back the
  //      first half's next layer.
  // The halves' all-reduces run in order on a communication stream of their own
  // ("tp_subpipe"), as Merak's asynchronous all-reduces on one communicator, so SimGrid
  // resolves what overlaps. Not with sequence parallelism, tp_comm_overlap or context
  // parallelism (throws stratasim::Error). Call before emitting any layer.
  void SubPipeline(int level);

  // Adds the forward (and the allocation of its saved activations) of `layer` on every rank of
  // every group in `groups`, which run in lock step. last[r] (indexed by rank) is the task rank
  // r's next task follows (-1: none); it is updated. Task names are prefix + layer/op/...
  void Forward(const LayerCost& layer, const std::vector<std::vector<int>>& groups, int iteration,
               const std::string& prefix, std::vector<TaskId>& last);
  // The backward, as AddBackward (strategies/layer_tasks.h) does it, with the backward of the
  // communication; recomputed ops re-run their forward (and its communication) first, unless
  // `recomputed` says Recompute already did.
  void Backward(const LayerCost& layer, const std::vector<std::vector<int>>& groups, int iteration,
                const std::string& prefix, std::vector<TaskId>& last, bool recomputed = false);
  // The recomputation alone: allocates the re-created activations and re-runs the recomputed
  // ops' forward (Merak's schedules run it before the gradient arrives).
  void Recompute(const LayerCost& layer, const std::vector<std::vector<int>>& groups, int iteration,
                 const std::string& prefix, std::vector<TaskId>& last);
  // Runs each layer's attention core as a context-parallel ring from now on.
  void SetContextRing(const ContextRing& ring) { ring_ = ring; }

  // Oases (strategies/tensor/oases.h), at sub-pipelining level 3:
  // Each half kernel that runs while the other half's all-reduce is in flight (the segment of
  // half 1 after half 0's all-reduce, the segment of half 0 after half 1's) is followed on its
  // stream by a task of `fraction` times its work (Phase::kOther, category "sm_interference"):
  // the SMs the NCCL kernel takes. 0: none.
  void SetSmInterference(double fraction) { sm_interference_ = fraction; }
  // A Recompute emitted right after a sub-pipelined Backward starts from the compute stream, not
  // from the backward's last all-reduce, and the next Backward still continues the halves: a
  // recomputation without collectives (Oases' communication-free recomputation) then overlaps
  // the last input-gradient all-reduce of the layer after it (Oases' cross-pass overlap).
  void OverlapRecompute() { overlap_recompute_ = true; }

 private:
  void Comm(CollectiveKind kind, const std::vector<std::vector<int>>& groups, int iteration,
            const std::string& name, Phase phase, std::vector<TaskId>& last);
  void Kernel(const std::string& name, const OpCost& op, const KernelCost& cost, Phase phase,
              const std::vector<std::vector<int>>& groups, int iteration,
              std::vector<TaskId>& last);
  // The backward of L's ops in reverse order (after any recomputation).
  void BackwardOps(const LayerCost& layer, const std::vector<std::vector<int>>& groups,
                   int iteration, std::vector<TaskId>& last);
  // The backward-input kernel of `op` and its collectives, not decomposed.
  void BackwardInput(const std::string& name, const OpCost& op,
                     const std::vector<std::vector<int>>& groups, int iteration,
                     std::vector<TaskId>& last);
  // Whether the collective next to GEMM `cost` is decomposed with it.
  bool Overlapped(const KernelCost& cost, const std::vector<std::vector<int>>& groups) const;
  // The all-gather before GEMM `cost` (kernel `name`) and the GEMM, in t overlapped steps.
  void AllGatherGemm(const std::string& comm_name, const std::string& name, const OpCost& op,
                     const KernelCost& cost, Phase phase,
                     const std::vector<std::vector<int>>& groups, int iteration,
                     std::vector<TaskId>& last);
  // GEMM `cost` and the reduce-scatter of its output, in t overlapped steps and a reduction.
  void GemmReduceScatter(const std::string& comm_name, const std::string& name, const OpCost& op,
                         const KernelCost& cost, Phase phase,
                         const std::vector<std::vector<int>>& groups, int iteration,
                         std::vector<TaskId>& last);
  // A transfer of `bytes` from `from` to `to` on the tp streams, after `dep` (if >= 0).
  std::pair<TaskId, TaskId> Chunk(int from, int to, double bytes, const std::string& name,
                                  Phase phase, int iteration, TaskId dep);
  // One compute task of rank r after `deps`, on `stream` (-1: the compute stream).
  TaskId AddKernel(int r, const std::string& name, OpKind kind, const KernelCost& cost, Phase phase,
                   int iteration, const std::vector<TaskId>& deps, int stream = -1);
  void Memory(const std::string& name, double bytes, const std::vector<std::vector<int>>& groups,
              int iteration);
  void OpForward(const std::string& name, const OpCost& op, Phase phase,
                 const std::vector<std::vector<int>>& groups, int iteration,
                 std::vector<TaskId>& last);
  // Context parallelism (context_ring.cpp). RingForward emits the forward (or recompute) of
  // the run of core ops starting at index `first` of `layer` as ring steps and returns the
  // index after the run; RingBackward emits the backward of the run ending before index `end`
  // and returns the run's first index.
  size_t RingForward(const LayerCost& layer, size_t first, Phase phase,
                     const std::vector<std::vector<int>>& groups, int iteration,
                     std::vector<TaskId>& last);
  size_t RingBackward(const LayerCost& layer, size_t end,
                      const std::vector<std::vector<int>>& groups, int iteration,
                      std::vector<TaskId>& last);
  // Sends `bytes` from every ring member to its neighbour `direction` (+1 or -1) steps along,
  // each send after after_a[r] and after_b[r] (when >= 0, after_b may be empty); returns the
  // receive of each rank, by rank.
  std::vector<TaskId> RingPass(const std::vector<std::vector<int>>& groups, int direction,
                               double bytes, const std::string& name, int iteration,
                               const std::vector<TaskId>& after_a,
                               const std::vector<TaskId>& after_b);
  // One ring step's share of a core kernel: 1/c of its work, 1/c of the keys in its shape.
  KernelCost RingStep(const KernelCost& cost) const;
  void RingMemory(const std::string& name, double bytes,
                  const std::vector<std::vector<int>>& groups, int iteration,
                  std::vector<TaskId>* last, const std::vector<TaskId>* after);

  // Sub-pipelined tensor parallelism (tp_subpipeline.cpp).
  // Whether `layer` (a transformer layer on groups of 2 GPUs or more) runs in halves.
  bool SubPipelined(const LayerCost& layer, const std::vector<std::vector<int>>& groups) const;
  // Level 1: GEMM `cost` of `op` as two halves, each followed by its all-reduce; `between`
  // (when not empty: the op's weight gradient, kernel `between_name`) runs after the first half.
  void SplitGemmAllReduce(const std::string& comm_name, const std::string& name, const OpCost& op,
                          const KernelCost& cost, Phase phase,
                          const std::vector<std::vector<int>>& groups, int iteration,
                          std::vector<TaskId>& last, const KernelCost& between = {},
                          const std::string& between_name = "");
  // Levels 2 and 3: the forward (or the recomputation, `phase`) and the backward of a layer as
  // two sub-micro-batches.
  void HalvesForward(const LayerCost& layer, Phase phase,
                     const std::vector<std::vector<int>>& groups, int iteration,
                     std::vector<TaskId>& last);
  void HalvesBackward(const LayerCost& layer, const std::vector<std::vector<int>>& groups,
                      int iteration, std::vector<TaskId>& last);
  // The all-reduce of half the collective's bytes on the sub-pipeline's stream, each member
  // after after[r]; sets after[r] to the members.
  void HalfAllReduce(const std::vector<std::vector<int>>& groups, int iteration,
                     const std::string& name, Phase phase, std::vector<TaskId>& after);
  // Level 3: where each half of the last sub-pipelined layer ended, and what it left in `last`;
  // the next layer continues both halves when `last` is still that.
  struct HalfChains {
    std::vector<TaskId> first_half, exit;
    bool in_flight = false;  // the second half's last all-reduce overlaps what continues
  };
  // The task after compute task `after` (of rank r, on `stream`) that charges the SMs an
  // overlapped all-reduce takes: sm_interference_ times `cost`. Returns `after` when off.
  TaskId Interfere(int r, const std::string& name, OpKind kind, const KernelCost& cost,
                   int iteration, TaskId after, int stream);
  // Whether `chains` continue into a layer that starts after `last`; sets `first` to where its
  // first half starts.
  bool Continues(const HalfChains& chains, const std::vector<std::vector<int>>& groups,
                 const std::vector<TaskId>& last, std::vector<TaskId>& first) const;

  TaskGraph& g_;
  std::string prefix_;  // of the layer being emitted: task names are Name::Join(prefix_, ...)
  DType dtype_;
  int stream_;
  bool sp_;
  double comm_bytes_;
  bool overlap_ = false;
  ContextRing ring_;
  int sub_level_ = 0;
  int sub_comm_stream_ = -1, sub_compute_stream_ = -1;
  bool sub_layer_ = false;  // the layer being emitted runs in halves
  HalfChains sub_forward_, sub_backward_;
  double sm_interference_ = 0;
  bool overlap_recompute_ = false;
};

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_TENSOR_TP_LAYER_H_
