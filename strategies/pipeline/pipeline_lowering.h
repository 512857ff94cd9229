// Lowers one pipeline configuration (stages of tensor-parallel groups, replicated for data
// parallelism; strategies/pipeline/pipeline.h documents the options and what is modelled) to a
// TaskGraph, following each stage's schedule (PipelineSchedule).
//
// The lowering walks every (replica, stage) lane's work list and emits, in passes over the lanes,
// the next item of every lane whose inputs exist: a forward once the previous chunk's activation
// was received, a backward once the next chunk's gradient was, the optimizer step once every
// replica of the stage reached it. Emission therefore follows the data, not a global clock, and
// a schedule that can never make progress is reported as a deadlock.
#ifndef STRATASIM_STRATEGIES_PIPELINE_PIPELINE_LOWERING_H_
#define STRATASIM_STRATEGIES_PIPELINE_PIPELINE_LOWERING_H_

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "models/workload.h"
#include "strategies/distributed_optimizer.h"
#include "strategies/fold.h"
#include "strategies/gradient_buckets.h"
#include "strategies/layer_tasks.h"
#include "strategies/parallel_layout.h"
#include "strategies/pipeline/trirace_classes.h"
#include "strategies/plan.h"
#include "strategies/tensor/tp_layer.h"

namespace stratasim {

// The pipeline's shape and settings as PlanPipeline read and checked them from the options
// PipelineOptions() declares (strategies/pipeline/pipeline.h).
struct PipelineShape {
  int p = 0, t = 1, d = 1, v = 1, m = 0;
  int c = 1;  // context parallelism (strategies/pipeline/context_parallel.h)
  std::string schedule, partition, order;
  bool sp = false, scatter_gather = true, dp_overlap = true;
  bool tp_comm_overlap = false;     // 3d only
  int tp_subpipeline = 0;           // Merak's sub-pipelined tensor parallelism, levels 1-3
  DataParallelOptimizer optimizer;  // 3d only; off for pipeline
  double bucket_cap = 0;
  std::vector<Recompute> recompute;  // per stage; empty: the model's choice
  // Set by a planner (strategies/planners/planner.h); empty by default, which changes nothing.
  // The GPU of each position, ranks[(replica * p + stage) * t + tensor index], replacing
  // `order` (ParallelLayout::ranks; context 1 only).
  std::vector<int> ranks;
  // Samples of each micro-batch of a replica's iteration, in order (AutoPipe's micro-batch
  // slicer splits the first ones to shorten the pipeline's start-up). When set, m is its size
  // and each micro-batch runs the workload of its size (PipelineLowering::
  // SetMicroBatchWorkloads); empty: m micro-batches of training.micro_batch. Schedules gpipe
  // and 1f1b only, context 1 only.
  std::vector<int> micro_batch_sizes;
  // TriRace's communication classes (strategies/pipeline/trirace.h); off unless kind trirace.
  CommClasses classes;
};

// The workloads of micro-batches of `samples` samples: as PipelineLowering's constructor takes
// them for training.micro_batch (strategies/pipeline/stage_workload.h builds both).
struct MicroBatchWorkload {
  int samples = 0;
  Workload workload;                // one GPU of a stage, the same layers as the constructor's
  std::vector<Workload> per_stage;  // per stage when the constructor got per-stage workloads
};

class PipelineLowering {
 public:
  // `w`: the workload one GPU of a stage runs, with the model's recomputation; `per_stage`:
  // one workload per stage when the options choose recomputation per stage, else empty.
  // `bounds`: the index in w.layers of each of the p x v chunks' first layer, followed by
  // w.layers.size(). `s` must outlive the lowering.
  PipelineLowering(const Scenario& s, const PipelineShape& o, Workload w,
                   std::vector<Workload> per_stage, std::vector<int> bounds);
  // With o.micro_batch_sizes: the workloads of the sizes other than training.micro_batch
  // (that one may be given too, else it is the constructor's). Call before Lower().
  void SetMicroBatchWorkloads(std::vector<MicroBatchWorkload> workloads);
  PipelineLowering(const PipelineLowering&) = delete;
  PipelineLowering& operator=(const PipelineLowering&) = delete;

  // The plan of warm-up + measured iterations. Call once. Throws stratasim::Error when the
  // schedule deadlocks, when the rank mapping is not a permutation of the GPUs, and when
  // micro-batch sizes are given with interleaved, pipedream_2bw or context > 1, or without the
  // workload of one of their sizes.
  Plan Lower();

 private:
  // One entry of a lane's (replica's stage's) work list: a forward, a backward, or the
  // optimizer step that ends batch `iteration`.
  struct Item {
    // kRecompute: Merak's recomputation of a checkpointed micro-batch ahead of its backward.
    enum Kind { kForward, kBackward, kStep, kRecompute } kind = kForward;
    int micro_batch = 0;  // index within the emitted sequence (spans batches for 2BW)
    int chunk = 0;
    int iteration = 0;
    bool last_backward = false;  // the batch's last backward of this chunk: its gradients are final
    bool checkpoint = false;     // a checkpointed micro-batch (its forward, recompute, backward)
    bool recomputed = false;     // a backward whose recomputation an earlier item ran
  };
  // Where a forward or backward runs: its lane's replica and stage, its global chunk, its c
  // tensor groups (one per context index; one without context parallelism) and the place
  // (first rank, compute stream, iteration, name prefix) of its tasks.
  struct Place {
    int replica = 0, stage = 0, chunk = 0;
    TaskPlace at;
    std::vector<std::vector<int>> groups;
  };
  struct Streams {
    int compute, fwd_send, fwd_recv, bwd_send, bwd_recv, dp;
    int cp_send = -1, cp_recv = -1;  // the context-parallel ring's, only when c > 1
    // TriRace (o.classes.enabled): the sparse class's stream, and the dense and sparse classes'
    // streams where they share no link with point-to-point traffic (never held).
    int sparse = -1, dp_free = -1, sparse_free = -1;
  };

  static Plan NewPlan(const Scenario& s, int gpus);
  static Streams OpenStreams(TaskGraph& g, bool context, bool classes);

  // Before the first round: which stage each rank is, the fold, model states, gradient buckets.
  void MapRanksToStages();
  void DecideFolding();
  void AddStageModelStates();
  void MakeChunkBuckets();

  // One emission round: one per iteration with a flush, one for all iterations with 2BW.
  void StartRound(int round);
  std::vector<Item> StageItems(int st, int round) const;
  void EmitRound();
  bool Ready(int lane) const;
  void Emit(int lane);
  Place PlaceOf(int lane, const Item& it) const;
  void EmitForward(int lane, const Item& it);
  void EmitBackward(int lane, const Item& it);
  void EmitRecompute(int lane, const Item& it);
  void EmitStep(int st, int iteration);

  // Point-to-point transfer of a boundary tensor from every GPU of (r, from) to the GPU of the
  // same lane index in (r, to); records the receives in into[first_slot + lane index].
  void Transfer(int r, int from, int to, double bytes, bool forward, const std::string& what,
                const TaskPlace& at, std::vector<TaskId>& into, size_t first_slot);
  // Sets cur_ of the groups' ranks to their received input, all-gathered when scattered.
  void Receive(const std::vector<std::vector<int>>& groups, const std::vector<TaskId>& from,
               size_t first_slot, double bytes, const TaskPlace& at, const std::string& what);
  // The gradient all-reduce (a reduce-scatter with the distributed optimizer) of tensor index x
  // of stage st over its data x context ranks (ParallelLayout::GradientGroup), the member of
  // replica q and context index k after ready[q * c + k] (-1: none); awaited by the next step.
  void AllReduce(int st, int x, double bytes, int iteration, const std::string& name,
                 const std::vector<TaskId>& ready);
  // Replica r's gradients of chunk j are final (ready_after: per layer of the chunk and tensor
  // index, the task after which they are); all-reduces the chunk once every replica's are.
  void GradientsFinal(int r, int st, int j, int iteration, std::vector<TaskId> ready_after);
  // Every replica produced chunk j's final gradients: all-reduce them bucket by bucket.
  void ReduceChunk(int st, int j, int iteration,
                   const std::vector<std::vector<TaskId>>& ready_by_replica);

  // The distributed optimizer: after stage st's step, all-gathers its chunks' parameters bucket
  // by bucket in forward order.
  void GatherParameters(int st, int iteration);
  // "allreduce", or "reduce_scatter" with the distributed optimizer.
  std::string ReduceName() const;

  void AddNotes();

  // TriRace (trirace_lowering.cpp): the classes' streams and priorities; the step placement of
  // deferred dense all-reduces; the sparse exchange of the embedding rows of stage st's chunk j
  // once every replica's are final; the stream of a class's collective over `ranks`.
  static void OpenClassStreams(TaskGraph& g, Streams& st);
  std::vector<Item> DeferSteps(std::vector<Item> items) const;
  void SparseExchange(int st, int j, int iteration,
                      const std::vector<std::vector<TaskId>>& ready_by_replica);
  int ClassStream(bool sparse, const std::vector<int>& ranks, int st) const;
  // The iteration a data-parallel task of batch `iteration` is counted in: with deferred dense
  // all-reduces, the next one (it runs during it), at most the last.
  int CommLabel(int iteration) const;
  void AddClassNotes();

  // Micro-batches of different sizes: checks the sizes and finds each one's workload; sets the
  // size-dependent settings for micro-batch `mb` of the round (its tensor-parallel collectives).
  void CheckMicroBatchSizes();
  void UseMicroBatch(int mb);

  // The layers micro-batch `mb` runs on stage st, and the bytes crossing into chunk j.
  const std::vector<LayerCost>& LayersOf(int st, int mb) const;
  double IntoBytes(int j, int mb) const;
  // The layers an item of stage st runs: a checkpointed micro-batch's are checkpointed_'s (Merak's
  // schedules, which micro-batches of different sizes do not take).
  const std::vector<LayerCost>& LayersOf(int st, const Item& it) const;
  int ServerOf(int rank) const;
  // The GPUs of a lane (a replica's stage): lane index y = context index x t + tensor index.
  int LaneRank(int r, int st, int y) const;
  // Index of (replica r, micro-batch mb, global chunk j, lane index y) in act_in_/grad_in_.
  size_t Slot(int r, int mb, int j, int y) const;

  const Scenario& s_;
  const PipelineShape o_;
  const TrainingSpec& tr_;
  const int gpus_, p_, t_, d_, v_, m_, chunks_;
  // Samples of the i-th micro-batch (empty: all tr_.micro_batch) and the index of its workload
  // in sized_ (-1: the constructor's).
  const std::vector<int> mb_samples_;
  std::vector<int> mb_workload_;
  std::vector<MicroBatchWorkload> sized_;
  std::vector<std::vector<double>> sized_into_bytes_;  // per sized_, per chunk
  const int c_, lane_gpus_;                            // context parallelism; t x c GPUs per lane
  const ParallelLayout layout_;
  const Workload w_;
  const std::vector<Workload> per_stage_;  // only with a per-stage recompute choice
  // Merak's schedules (merak_schedule.cpp): w_ with every recomputable layer fully recomputed,
  // for checkpointed micro-batches; and w_ without recomputation, for a last stage that never
  // recomputes. Empty otherwise.
  Workload checkpointed_, plain_last_;
  const std::vector<int> bounds_;
  const bool two_bw_;
  // Megatron-LM's scatter/gather optimisation (Narayanan et al. 2021, SC, §4.1): each GPU of
  // the sending tensor group sends 1/t of the boundary tensor, which the receiving group
  // all-gathers over its fast links. Sequence parallelism's boundary is already split.
  const bool gather_;
  const double send_fraction_;
  const double grad_bytes_;
  const bool overlap_;  // per-bucket gradient all-reduces overlapping the backward
  const bool shard_;    // the distributed optimizer with d > 1

  // Per global chunk: parameters and the bytes crossing into it (per GPU of the tensor group
  // when sequence parallelism already splits them). Per stage: parameters.
  std::vector<double> chunk_params_, into_bytes_, stage_params_;
  // Gradient buckets of each chunk (layer indices global), for the overlapped all-reduce.
  std::vector<std::vector<GradientBucket>> chunk_buckets_;
  // Per global layer: its bucket in its chunk's chunk_buckets_ (-1: none).
  std::vector<int> layer_bucket_;
  // Overlapped parameter all-gather: per rank, per global layer, the member of the last step's
  // all-gather that the layer's first forward waits for (empty: none).
  std::vector<std::vector<TaskId>> param_ready_;

  // Declared in this order so that the streams are opened on the new graph before the
  // emitter uses them.
  Plan plan_;
  TaskGraph& g_;
  const Streams streams_;
  TensorLayerEmitter em_;

  // Folding (strategies/fold.h): replicas [0, emitted_) are planned in full; the others only
  // as mirrors of the traffic that can meet another block's.
  FoldDecision folding_;
  bool fold_ = false;
  int emitted_ = 0, block_ = 0;

  std::vector<TaskId> cur_;  // per rank: the task the next one follows

  // The current round.
  int seq_ = 0;  // micro-batches in this round
  std::vector<std::vector<Item>> lanes_;
  std::vector<size_t> next_;
  std::vector<TaskId> lane_last_;  // per lane and lane index: the lane's last backward kernel
  std::vector<TaskId> act_in_, grad_in_;  // received activations and gradients, by Slot()
  // Overlapped data parallelism: per (stage, chunk, iteration), per replica, the task after
  // which each layer's gradient is final on each tensor index; buckets go out once every
  // replica has produced them.
  std::map<std::tuple<int, int, int>, std::vector<std::vector<TaskId>>> grads_;
  // Per rank, per iteration: the data-parallel collective members its step of that iteration
  // awaits (TriRace's deferred steps come after the next iteration's members exist).
  std::vector<std::map<int, std::vector<TaskId>>> dp_members_;
  // TriRace: per (iteration, replica), the rows the sparse exchange sent.
  std::map<std::pair<int, int>, long long> sparse_rows_;
  std::vector<TaskId> after_of_;  // AllReduce's dependencies, by rank
};

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PIPELINE_PIPELINE_LOWERING_H_
