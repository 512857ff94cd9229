#include "strategies/pipeline/pipeline_lowering.h"

#include <cstdio>
#include <set>
#include <utility>

#include "core/error.h"
#include "core/units.h"
#include "models/memory.h"
#include "models/recompute.h"
#include "strategies/pipeline/context_parallel.h"
#include "strategies/pipeline/pipeline.h"
#include "strategies/pipeline/pipeline_figures.h"

namespace stratasim {
namespace {

std::string Str(int n) { return std::to_string(n); }

// Per chunk of `bounds`: the bytes crossing into it, the input of its first layer (`fallback`
// when the workload does not know it).
std::vector<double> ChunkInputBytes(const Workload& w, const std::vector<int>& bounds,
                                    double fallback) {
  std::vector<double> into(bounds.size() - 1, 0);
  for (size_t j = 0; j + 1 < bounds.size(); ++j) {
    const double in = w.layers[bounds[j]].input_bytes;
    into[j] = in > 0 ? in : fallback;
  }
  return into;
}

std::string JoinSizes(const std::vector<int>& sizes) {
  std::string out;
  for (int n : sizes) out += (out.empty() ? "" : ",") + Str(n);
  return out;
}

}  // namespace

PipelineLowering::PipelineLowering(const Scenario& s, const PipelineShape& o, Workload w,
                                   std::vector<Workload> per_stage, std::vector<int> bounds)
    : s_(s),
      o_(o),
      tr_(s.training),
      gpus_(s.cluster.NumGpus()),
      p_(o.p),
      t_(o.t),
      d_(o.d),
      v_(o.v),
      m_(o.micro_batch_sizes.empty() ? o.m : static_cast<int>(o.micro_batch_sizes.size())),
      chunks_(o.p * o.v),
      mb_samples_(o.micro_batch_sizes),
      c_(o.c),
      lane_gpus_(o.t * o.c),
      layout_{o.t, o.p, o.d, o.order, o.c, o.ranks},
      w_(std::move(w)),
      per_stage_(std::move(per_stage)),
      bounds_(std::move(bounds)),
      two_bw_(o.schedule == "pipedream_2bw"),
      gather_(o.t > 1 && !o.sp && o.scatter_gather),
      send_fraction_(gather_ ? 1.0 / o.t : 1.0),
      grad_bytes_(o.optimizer.GradBytes(s.training.precision)),
      overlap_(o.dp_overlap && o.d * o.c > 1),
      // Megatron shards the optimizer over the data x context ranks (its data-parallel group
      // with context parallelism).
      shard_(o.optimizer.distributed && o.d * o.c > 1),
      chunk_params_(chunks_, 0),
      into_bytes_(chunks_, 0),
      stage_params_(o.p, 0),
      plan_(NewPlan(s, gpus_)),
      g_(plan_.graph),
      streams_(OpenStreams(g_, o.c > 1, o.classes.enabled)),
      // A tensor-parallel collective moves the GPU's b x s/c tokens.
      em_(g_, StorageDType(s.training.precision), streams_.compute, o.sp,
          static_cast<double>(s.training.micro_batch) * s.model.sequence * s.model.hidden *
              BytesPerElement(StorageDType(s.training.precision)) / o.c),
      cur_(gpus_, -1) {
  if (c_ > 1) {
    ContextRing ring = ContextRingOf(s.model, tr_.micro_batch, StorageDType(tr_.precision), c_, t_);
    ring.send_stream = streams_.cp_send;
    ring.recv_stream = streams_.cp_recv;
    em_.SetContextRing(ring);
  }
  const double fallback_bytes = tr_.micro_batch * w_.tokens_per_sample * s.model.hidden *
                                BytesPerElement(StorageDType(tr_.precision)) / c_;
  into_bytes_ = ChunkInputBytes(w_, bounds_, fallback_bytes);
  for (int j = 0; j < chunks_; ++j) {
    for (int i = bounds_[j]; i < bounds_[j + 1]; ++i) chunk_params_[j] += w_.layers[i].params;
  }
  for (int j = 0; j < chunks_; ++j) stage_params_[j % p_] += chunk_params_[j];
  if (IsMerakSchedule(o.schedule)) {
    checkpointed_ = w_;
    ApplyRecompute(checkpointed_, Recompute::kFull);
  }
  if (LastStageNeverRecomputes(o.schedule)) {
    plain_last_ = w_;
    ApplyRecompute(plain_last_, Recompute::kNone);
  }
  if (o.tp_comm_overlap) em_.OverlapCommunication();
  if (o.tp_subpipeline > 0) em_.SubPipeline(o.tp_subpipeline);
  plan_.samples_per_iteration = static_cast<double>(m_) * tr_.micro_batch * d_;
  if (!mb_samples_.empty()) {
    double samples = 0;
    for (int n : mb_samples_) samples += n;
    plan_.samples_per_iteration = samples * d_;
  }
  plan_.tokens_per_sample = w_.tokens_per_sample;
}

void PipelineLowering::SetMicroBatchWorkloads(std::vector<MicroBatchWorkload> workloads) {
  sized_ = std::move(workloads);
  sized_into_bytes_.clear();
  for (const MicroBatchWorkload& mw : sized_) {
    if (mw.workload.layers.size() != w_.layers.size()) {
      throw Error("micro-batch workload of " + Str(mw.samples) + " sample(s) has " +
                  Str(static_cast<int>(mw.workload.layers.size())) + " layers, not " +
                  Str(static_cast<int>(w_.layers.size())) + " as the pipeline's");
    }
    if (mw.per_stage.size() != per_stage_.size()) {
      throw Error("micro-batch workload of " + Str(mw.samples) + " sample(s) has " +
                  Str(static_cast<int>(mw.per_stage.size())) + " per-stage workloads, not " +
                  Str(static_cast<int>(per_stage_.size())) + " as the pipeline's");
    }
    const double fallback = static_cast<double>(mw.samples) * w_.tokens_per_sample *
                            s_.model.hidden * BytesPerElement(StorageDType(tr_.precision)) / c_;
    sized_into_bytes_.push_back(ChunkInputBytes(mw.workload, bounds_, fallback));
  }
}

void PipelineLowering::CheckMicroBatchSizes() {
  if (mb_samples_.empty()) return;
  const std::string what = "micro_batch_sizes (" + JoinSizes(mb_samples_) + ")";
  if (o_.schedule != "gpipe" && o_.schedule != "1f1b") {
    throw Error(what + " needs schedule gpipe or 1f1b, not " + o_.schedule);
  }
  if (c_ != 1) throw Error(what + " needs context 1, not " + Str(c_));
  mb_workload_.assign(mb_samples_.size(), -1);
  for (size_t k = 0; k < mb_samples_.size(); ++k) {
    const int n = mb_samples_[k];
    if (n < 1) throw Error(what + ": micro-batch " + Str(static_cast<int>(k)) + " has no samples");
    for (size_t i = 0; i < sized_.size(); ++i) {
      if (sized_[i].samples == n) mb_workload_[k] = static_cast<int>(i);
    }
    if (mb_workload_[k] < 0 && n != tr_.micro_batch) {
      throw Error(what + ": no workload for micro-batches of " + Str(n) +
                  " sample(s) (PipelineLowering::SetMicroBatchWorkloads)");
    }
  }
}

void PipelineLowering::UseMicroBatch(int mb) {
  if (mb_samples_.empty()) return;
  // A tensor-parallel collective moves the micro-batch's b x s x h elements.
  em_.SetCommBytes(static_cast<double>(mb_samples_[mb]) * s_.model.sequence * s_.model.hidden *
                   BytesPerElement(StorageDType(tr_.precision)));
}

Plan PipelineLowering::NewPlan(const Scenario& s, int gpus) {
  Plan plan;
  plan.graph = TaskGraph(gpus);
  if (s.simulation.max_tasks > 0) plan.graph.SetTaskLimit(s.simulation.max_tasks);
  return plan;
}

PipelineLowering::Streams PipelineLowering::OpenStreams(TaskGraph& g, bool context, bool classes) {
  Streams st;
  st.compute = g.Stream("compute");
  st.fwd_send = g.Stream("p2p_fwd_send");
  st.fwd_recv = g.Stream("p2p_fwd_recv");
  st.bwd_send = g.Stream("p2p_bwd_send");
  st.bwd_recv = g.Stream("p2p_bwd_recv");
  st.dp = g.Stream("dp");
  if (context) {
    st.cp_send = g.Stream("cp_send");
    st.cp_recv = g.Stream("cp_recv");
  }
  if (classes) OpenClassStreams(g, st);
  return st;
}

Plan PipelineLowering::Lower() {
  layout_.CheckRanks(gpus_);
  CheckMicroBatchSizes();
  MapRanksToStages();
  DecideFolding();
  AddStageModelStates();
  MakeChunkBuckets();
  const int iterations = tr_.warmup_iterations + tr_.measured_iterations;
  const int rounds = two_bw_ ? 1 : iterations;
  for (int round = 0; round < rounds; ++round) {
    StartRound(round);
    EmitRound();
  }
  plan_.fold = DescribeFold(folding_, gpus_);
  plan_.pipeline = LoweredPipelineFigures(w_, bounds_, p_);
  AddNotes();
  return std::move(plan_);
}

void PipelineLowering::MapRanksToStages() {
  plan_.rank_stage.assign(gpus_, 0);
  for (int r = 0; r < d_; ++r) {
    for (int st = 0; st < p_; ++st) {
      for (int y = 0; y < lane_gpus_; ++y) plan_.rank_stage[LaneRank(r, st, y)] = st;
    }
  }
}

void PipelineLowering::DecideFolding() {
  // Replicas are blocks of t x c x p consecutive ranks only in rank order tpd. A lane's t x c
  // consecutive ranks then fill part of one server, so that the context-parallel ring, like
  // the tensor-parallel collectives, never leaves it: folding needs no mirror of it.
  folding_ = DecideFold(s_, ReplicaLayout{d_, lane_gpus_ * p_, lane_gpus_});
  if (folding_.fold && o_.classes.enabled) {
    // Each replica draws its own token ids (sparse rows differ), and the gates act per rank.
    folding_ = FoldDecision{false, d_, 0, "TriRace's replicas differ (sparse rows, gates)"};
  } else if (folding_.fold && !o_.ranks.empty()) {
    folding_ = FoldDecision{false, d_, 0, "an explicit rank mapping places the replicas"};
  } else if (folding_.fold && o_.order != "tpd") {
    folding_ = FoldDecision{false, d_, 0, "rank order " + o_.order + " interleaves the replicas"};
  }
  fold_ = folding_.fold;
  emitted_ = folding_.block_replicas;
  block_ = folding_.block_gpus;
  // Set before any task, so that figures measured as tasks retire know it (docs/scale.md).
  if (fold_) g_.SetFold(FoldRepresentatives(gpus_, block_));
}

void PipelineLowering::AddStageModelStates() {
  for (int r = 0; r < emitted_; ++r) {
    for (int st = 0; st < p_; ++st) {
      for (int y = 0; y < lane_gpus_; ++y) {
        TaskPlace at{LaneRank(r, st, y), streams_.compute, 0, ""};
        AddModelStates(g_, at, stage_params_[st], tr_.precision,
                       StateSharding{1, 1, o_.optimizer.OptimizerShards(d_ * c_)},
                       o_.optimizer.StateGradBytes());
        if (two_bw_) {
          // The second weight version PipeDream-2BW keeps for in-flight micro-batches.
          AddMemory(g_, at, "weights_stashed", "weights",
                    AdamStateBytes(stage_params_[st], tr_.precision).weights);
        }
        if (o_.classes.enabled && o_.classes.defer_dense) {
          // Batch k + 1 accumulates its gradients while batch k's are still being reduced.
          AddMemory(g_, at, "gradients_deferred", "gradients", stage_params_[st] * grad_bytes_);
        }
      }
    }
  }
}

void PipelineLowering::MakeChunkBuckets() {
  chunk_buckets_.assign(chunks_, {});
  for (int j = 0; j < chunks_; ++j) {
    std::vector<LayerCost> part(w_.layers.begin() + bounds_[j], w_.layers.begin() + bounds_[j + 1]);
    const std::optional<SparseEmbedding>& sparse = w_.sparse_embedding;
    if (o_.classes.sparse && sparse && sparse->layer >= bounds_[j] &&
        sparse->layer < bounds_[j + 1]) {
      // TriRace exchanges the token table's rows on their own (SparseExchange).
      part[sparse->layer - bounds_[j]].params -= sparse->rows * sparse->row_params;
    }
    chunk_buckets_[j] = MakeGradientBuckets(part, grad_bytes_, o_.bucket_cap);
    const std::vector<int> of = BucketOfLayer(chunk_buckets_[j], bounds_[j + 1] - bounds_[j]);
    layer_bucket_.insert(layer_bucket_.end(), of.begin(), of.end());
    for (GradientBucket& b : chunk_buckets_[j]) b.ready_after_layer += bounds_[j];
  }
}

std::vector<PipelineLowering::Item> PipelineLowering::StageItems(int st, int round) const {
  std::vector<Item> items;
  std::map<std::pair<int, int>, size_t> last_bwd;  // (iteration, chunk) -> index
  // Merak's schedules: the checkpointed and the already recomputed (micro-batch, chunk)s.
  std::set<std::pair<int, int>> checkpointed, recomputed;
  for (const PipelineOp& op : PipelineSchedule(o_.schedule, p_, st, seq_, v_)) {
    const int iteration = two_bw_ ? op.micro_batch / m_ : round;
    const std::pair<int, int> key{op.micro_batch, op.chunk};
    if (op.checkpoint) checkpointed.insert(key);
    if (op.recompute) {
      recomputed.insert(key);
      items.push_back({Item::kRecompute, op.micro_batch, op.chunk, iteration, false,
                       checkpointed.count(key) > 0});
      continue;
    }
    if (!op.forward) last_bwd[{iteration, op.chunk}] = items.size();
    items.push_back({op.forward ? Item::kForward : Item::kBackward, op.micro_batch, op.chunk,
                     iteration, false, checkpointed.count(key) > 0,
                     !op.forward && recomputed.count(key) > 0});
    if (two_bw_ && !op.forward && op.micro_batch % m_ == m_ - 1) {
      items.push_back({Item::kStep, 0, 0, iteration});
    }
  }
  for (const auto& [key, index] : last_bwd) items[index].last_backward = true;
  if (!two_bw_) items.push_back({Item::kStep, 0, 0, round});
  if (o_.classes.enabled && o_.classes.defer_dense) return DeferSteps(std::move(items));
  return items;
}

void PipelineLowering::StartRound(int round) {
  const int iterations = tr_.warmup_iterations + tr_.measured_iterations;
  seq_ = two_bw_ ? m_ * iterations : m_;
  lanes_.assign(static_cast<size_t>(emitted_) * p_, {});
  for (int st = 0; st < p_; ++st) {
    const std::vector<Item> items = StageItems(st, round);
    for (int r = 0; r < emitted_; ++r) lanes_[r * p_ + st] = items;
  }
  next_.assign(lanes_.size(), 0);
  lane_last_.assign(lanes_.size() * lane_gpus_, -1);
  const size_t slots = static_cast<size_t>(d_) * seq_ * chunks_;
  act_in_.assign(slots * lane_gpus_, -1);
  grad_in_.assign(slots * lane_gpus_, -1);
  grads_.clear();
  dp_members_.assign(gpus_, {});
  sparse_rows_.clear();
  after_of_.assign(gpus_, -1);
}

void PipelineLowering::EmitRound() {
  bool done = false;
  while (!done) {
    done = true;
    bool progress = false;
    for (int lane = 0; lane < static_cast<int>(lanes_.size()); ++lane) {
      while (next_[lane] < lanes_[lane].size() && Ready(lane)) {
        Emit(lane);
        progress = true;
      }
      if (next_[lane] < lanes_[lane].size()) done = false;
    }
    if (!done && !progress) throw Error("pipeline schedule " + o_.schedule + " deadlocked");
  }
}

bool PipelineLowering::Ready(int lane) const {
  const Item& it = lanes_[lane][next_[lane]];
  const int r = lane / p_, st = lane % p_, j = it.chunk * p_ + st;
  if (it.kind == Item::kRecompute) return true;  // needs only its forward, emitted before it
  if (it.kind == Item::kForward) return j == 0 || act_in_[Slot(r, it.micro_batch, j, 0)] >= 0;
  if (it.kind == Item::kBackward) {
    return j == chunks_ - 1 || grad_in_[Slot(r, it.micro_batch, j, 0)] >= 0;
  }
  for (int q = 0; q < emitted_; ++q) {  // the step waits for every replica of the stage
    const int other = q * p_ + st;
    if (next_[other] >= lanes_[other].size()) return false;
    const Item& oi = lanes_[other][next_[other]];
    if (oi.kind != Item::kStep || oi.iteration != it.iteration) return false;
  }
  return true;
}

void PipelineLowering::Emit(int lane) {
  const Item& it = lanes_[lane][next_[lane]];
  if (it.kind == Item::kStep) {
    EmitStep(lane % p_, it.iteration);  // advances every replica's lane of the stage
    return;
  }
  if (it.kind == Item::kForward) {
    EmitForward(lane, it);
  } else if (it.kind == Item::kRecompute) {
    EmitRecompute(lane, it);
  } else {
    EmitBackward(lane, it);
  }
  ++next_[lane];
}

PipelineLowering::Place PipelineLowering::PlaceOf(int lane, const Item& it) const {
  Place pl;
  pl.replica = lane / p_;
  pl.stage = lane % p_;
  pl.chunk = it.chunk * p_ + pl.stage;
  const std::string prefix = "it" + Str(it.iteration) + "/mb" + Str(it.micro_batch) + "/" +
                             (v_ > 1 ? "c" + Str(it.chunk) + "/" : "");
  pl.at = TaskPlace{layout_.Rank(pl.replica, pl.stage, 0), streams_.compute, it.iteration, prefix};
  for (int k = 0; k < c_; ++k) pl.groups.push_back(layout_.TensorGroup(pl.replica, pl.stage, k));
  return pl;
}

void PipelineLowering::EmitForward(int lane, const Item& it) {
  const Place pl = PlaceOf(lane, it);
  const int r = pl.replica, st = pl.stage, j = pl.chunk;
  UseMicroBatch(it.micro_batch);
  const std::vector<LayerCost>& layers = LayersOf(st, it);
  if (j == 0) {
    for (int y = 0; y < lane_gpus_; ++y) cur_[LaneRank(r, st, y)] = -1;
  } else {
    Receive(pl.groups, act_in_, Slot(r, it.micro_batch, j, 0), IntoBytes(j, it.micro_batch), pl.at,
            "activation");
  }
  for (int i = bounds_[j]; i < bounds_[j + 1]; ++i) {
    const TaskId from = g_.next_id();
    em_.Forward(layers[i], pl.groups, it.iteration, pl.at.prefix, cur_);
    if (it.micro_batch == 0 && !param_ready_.empty()) {
      std::vector<TaskId> dep_of(gpus_, -1);
      for (const std::vector<int>& group : pl.groups) {
        for (int x : group) {
          if (!param_ready_[x].empty()) dep_of[x] = param_ready_[x][i];
        }
      }
      AwaitFirstTasks(g_, from, streams_.compute, dep_of);
    }
  }
  if (j + 1 < chunks_) {
    Transfer(r, st, (j + 1) % p_, IntoBytes(j + 1, it.micro_batch), true, "activation", pl.at,
             act_in_, Slot(r, it.micro_batch, j + 1, 0));
  }
}

void PipelineLowering::EmitBackward(int lane, const Item& it) {
  const Place pl = PlaceOf(lane, it);
  const int r = pl.replica, st = pl.stage, j = pl.chunk;
  UseMicroBatch(it.micro_batch);
  const std::vector<LayerCost>& layers = LayersOf(st, it);
  if (j == chunks_ - 1) {
    for (int y = 0; y < lane_gpus_; ++y) cur_[LaneRank(r, st, y)] = -1;
  } else {
    Receive(pl.groups, grad_in_, Slot(r, it.micro_batch, j, 0), IntoBytes(j + 1, it.micro_batch),
            pl.at, "gradient");
  }
  const int n_layers = bounds_[j + 1] - bounds_[j];
  std::vector<TaskId> ready_after(static_cast<size_t>(n_layers) * lane_gpus_, -1);
  for (int i = bounds_[j + 1] - 1; i >= bounds_[j]; --i) {
    em_.Backward(layers[i], pl.groups, it.iteration, pl.at.prefix, cur_, it.recomputed);
    for (int y = 0; y < lane_gpus_; ++y) {
      ready_after[(i - bounds_[j]) * lane_gpus_ + y] = cur_[LaneRank(r, st, y)];
    }
  }
  for (int y = 0; y < lane_gpus_; ++y) lane_last_[lane * lane_gpus_ + y] = cur_[LaneRank(r, st, y)];
  if (j > 0) {
    Transfer(r, st, (j - 1) % p_, IntoBytes(j, it.micro_batch), false, "gradient", pl.at, grad_in_,
             Slot(r, it.micro_batch, j - 1, 0));
  }
  if (overlap_ && it.last_backward) GradientsFinal(r, st, j, it.iteration, std::move(ready_after));
}

void PipelineLowering::EmitRecompute(int lane, const Item& it) {
  // Follows the lane's previous compute, not the gradient: it runs while the gradient travels.
  const Place pl = PlaceOf(lane, it);
  const std::vector<LayerCost>& layers = LayersOf(pl.stage, it);
  for (int i = bounds_[pl.chunk]; i < bounds_[pl.chunk + 1]; ++i) {
    em_.Recompute(layers[i], pl.groups, it.iteration, pl.at.prefix, cur_);
  }
}

void PipelineLowering::GradientsFinal(int r, int st, int j, int iteration,
                                      std::vector<TaskId> ready_after) {
  auto& per_replica = grads_[{st, j, iteration}];
  per_replica.resize(emitted_);
  per_replica[r] = std::move(ready_after);
  bool all = true;
  for (const auto& ready_of : per_replica) all = all && !ready_of.empty();
  if (all) {
    ReduceChunk(st, j, iteration, per_replica);
    if (o_.classes.sparse) SparseExchange(st, j, iteration, per_replica);
    grads_.erase({st, j, iteration});
  }
}

void PipelineLowering::EmitStep(int st, int iteration) {
  // The flush reached on every replica of this stage: without overlap, one gradient
  // all-reduce of the whole stage per tensor index; then every replica's Adam step.
  if (d_ * c_ > 1 && !overlap_) {
    for (int x = 0; x < t_; ++x) {
      std::vector<TaskId> ready(static_cast<size_t>(d_) * c_, -1);
      for (int q = 0; q < emitted_; ++q) {
        for (int k = 0; k < c_; ++k) {
          ready[q * c_ + k] = lane_last_[(q * p_ + st) * lane_gpus_ + k * t_ + x];
        }
      }
      AllReduce(st, x, stage_params_[st] * grad_bytes_, iteration,
                "it" + Str(iteration) + "/" + ReduceName() + "/stage" + Str(st), ready);
    }
  }
  for (int q = 0; q < emitted_; ++q) {
    const int other = q * p_ + st;
    for (int y = 0; y < lane_gpus_; ++y) {
      const int rank = LaneRank(q, st, y);
      Task step = AdamStepTask(stage_params_[st] / (shard_ ? d_ * c_ : 1), tr_.precision);
      step.rank = rank;
      step.stream = streams_.compute;
      step.iteration = CommLabel(iteration);
      step.name = "it" + Str(iteration) + "/adam";
      auto members = dp_members_[rank].find(iteration);
      if (members != dp_members_[rank].end()) {
        step.deps = std::move(members->second);
        dp_members_[rank].erase(members);
      }
      TaskId& last = lane_last_[other * lane_gpus_ + y];
      if (last >= 0) step.deps.push_back(last);
      last = g_.Add(std::move(step));
    }
    ++next_[other];
  }
  if (shard_) GatherParameters(st, iteration);
}

void PipelineLowering::GatherParameters(int st, int iteration) {
  const bool overlap = o_.optimizer.overlap_param_gather;
  if (overlap && param_ready_.empty()) param_ready_.assign(gpus_, {});
  for (int x = 0; x < t_; ++x) {
    // Sharded over the data x context ranks, as the gradients were reduce-scattered.
    const std::vector<int> ranks = layout_.GradientGroup(st, x);
    auto lane_slot = [&](int q, int k) { return (q * p_ + st) * lane_gpus_ + k * t_ + x; };
    std::vector<TaskId> after(gpus_, -1);
    for (int q = 0; q < emitted_; ++q) {
      for (int k = 0; k < c_; ++k) after[layout_.Rank(q, st, x, k)] = lane_last_[lane_slot(q, k)];
    }
    // In the order the next forward uses them: chunk by chunk, each from its first layer's
    // bucket (the last to be reduced).
    for (int j = st; j < chunks_; j += p_) {
      for (size_t b = chunk_buckets_[j].size(); b-- > 0;) {
        const std::vector<TaskId> member_of = AddGroupCollectives(
            g_, {ranks}, CollectiveKind::kAllGather,
            chunk_buckets_[j][b].params * TrainingBytesPerParam(tr_.precision),
            StorageDType(tr_.precision), overlap ? streams_.dp : streams_.compute, iteration,
            "it" + Str(iteration) + "/param_all_gather/chunk" + Str(j) + "/bucket" + Str(b), after);
        for (int q = 0; q < d_; ++q) {
          for (int k = 0; k < c_; ++k) {
            const int r = layout_.Rank(q, st, x, k);
            if (fold_ && r >= block_) {
              g_.SetMirror(member_of[r], member_of[r % block_]);
              continue;
            }
            if (!overlap) {
              // On the compute stream: the next forward follows it in stream order.
              after[r] = member_of[r];
              lane_last_[lane_slot(q, k)] = member_of[r];
              continue;
            }
            std::vector<TaskId>& ready = param_ready_[r];
            ready.resize(w_.layers.size(), -1);
            for (int i = bounds_[j]; i < bounds_[j + 1]; ++i) {
              if (layer_bucket_[i] == static_cast<int>(b)) ready[i] = member_of[r];
            }
          }
        }
      }
    }
  }
}

std::string PipelineLowering::ReduceName() const { return shard_ ? "reduce_scatter" : "allreduce"; }

void PipelineLowering::Transfer(int r, int from, int to, double bytes, bool forward,
                                const std::string& what, const TaskPlace& at,
                                std::vector<TaskId>& into, size_t first_slot) {
  for (int y = 0; y < lane_gpus_; ++y) {
    Task send, recv;
    send.iteration = recv.iteration = at.iteration;
    send.phase = recv.phase = Phase::kCommunication;
    send.category = recv.category = "pp";
    send.stream = forward ? streams_.fwd_send : streams_.bwd_send;
    recv.stream = forward ? streams_.fwd_recv : streams_.bwd_recv;
    send.rank = LaneRank(r, from, y);
    recv.rank = LaneRank(r, to, y);
    send.name = Name::Join(at.prefix, "send_" + what);
    recv.name = Name::Join(at.prefix, "recv_" + what);
    send.deps = {cur_[send.rank]};
    const auto [s_id, r_id] =
        g_.AddTransfer(send.rank, recv.rank, bytes * send_fraction_, send, recv);
    into[first_slot + y] = r_id;
    // The folded replicas' copies of a transfer that leaves its server.
    if (!fold_ || ServerOf(send.rank) == ServerOf(recv.rank)) continue;
    for (int q = r + emitted_; q < d_; q += emitted_) {
      send.rank = LaneRank(q, from, y);
      recv.rank = LaneRank(q, to, y);
      send.deps = {};
      const auto [ms, mr] =
          g_.AddTransfer(send.rank, recv.rank, bytes * send_fraction_, send, recv);
      // Its counterpart: the block-0 transfer at the same position, replica q mod emitted.
      g_.SetMirror(ms, s_id);
      g_.SetMirror(mr, r_id);
    }
  }
}

void PipelineLowering::Receive(const std::vector<std::vector<int>>& groups,
                               const std::vector<TaskId>& from, size_t first_slot, double bytes,
                               const TaskPlace& at, const std::string& what) {
  // groups[k][x] is lane index k * t + x.
  for (int k = 0; k < c_; ++k) {
    for (int x = 0; x < t_; ++x) cur_[groups[k][x]] = from[first_slot + k * t_ + x];
  }
  if (!gather_) return;
  const std::vector<TaskId> member_of = AddGroupCollectives(
      g_, groups, CollectiveKind::kAllGather, bytes, StorageDType(tr_.precision), streams_.compute,
      at.iteration, at.prefix + "gather_" + what, cur_, "pp");
  for (const std::vector<int>& group : groups) {
    for (int x : group) cur_[x] = member_of[x];
  }
}

void PipelineLowering::AllReduce(int st, int x, double bytes, int iteration,
                                 const std::string& name, const std::vector<TaskId>& ready) {
  for (int q = 0; q < d_; ++q) {
    for (int k = 0; k < c_; ++k) after_of_[layout_.Rank(q, st, x, k)] = ready[q * c_ + k];
  }
  const std::vector<int> ranks = layout_.GradientGroup(st, x);
  const std::vector<TaskId> member_of = AddGroupCollectives(
      g_, {ranks}, shard_ ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, bytes,
      o_.optimizer.GradDType(tr_.precision),
      o_.classes.enabled ? ClassStream(false, ranks, st) : streams_.dp, CommLabel(iteration), name,
      after_of_);
  for (int r : ranks) {
    if (fold_ && r >= block_) {
      g_.SetMirror(member_of[r], member_of[r % block_]);
    } else {
      dp_members_[r][iteration].push_back(member_of[r]);
    }
  }
}

void PipelineLowering::ReduceChunk(int st, int j, int iteration,
                                   const std::vector<std::vector<TaskId>>& ready_by_replica) {
  const int first = bounds_[j];
  for (size_t k = 0; k < chunk_buckets_[j].size(); ++k) {
    const GradientBucket& b = chunk_buckets_[j][k];
    for (int x = 0; x < t_; ++x) {
      std::vector<TaskId> ready(static_cast<size_t>(d_) * c_, -1);
      for (int q = 0; q < emitted_; ++q) {
        for (int kc = 0; kc < c_; ++kc) {
          ready[q * c_ + kc] =
              ready_by_replica[q][(b.ready_after_layer - first) * lane_gpus_ + kc * t_ + x];
        }
      }
      AllReduce(st, x, b.params * grad_bytes_, iteration,
                "it" + Str(iteration) + "/" + ReduceName() + "/chunk" + Str(j) + "/bucket" + Str(k),
                ready);
    }
  }
}

void PipelineLowering::AddNotes() {
  std::string split;
  for (int j = 0; j < chunks_; ++j) split += (j ? "," : "") + Str(bounds_[j + 1] - bounds_[j]);
  std::string shape = Str(p_) + " stages x " + Str(d_) + " data-parallel replica(s)";
  if (c_ > 1) shape = "context " + Str(c_) + " x " + shape;
  if (t_ > 1) shape = "tensor " + Str(t_) + (o_.sp ? " (sequence parallel)" : "") + " x " + shape;
  if (t_ > 1 || c_ > 1) shape += ", rank order " + o_.order;
  plan_.notes.push_back(shape + ", schedule " + o_.schedule +
                        (v_ > 1 ? " with " + Str(v_) + " virtual stages" : "") + ", " + Str(m_) +
                        (mb_samples_.empty()
                             ? " micro-batch(es) of " + Str(tr_.micro_batch)
                             : " micro-batch(es) of " + JoinSizes(mb_samples_) + " samples"));
  plan_.notes.push_back("workload layers per " + std::string(v_ > 1 ? "chunk" : "stage") + ": " +
                        split + "; " + FormatBytes(into_bytes_[chunks_ - 1] * send_fraction_) +
                        " sent per GPU per boundary per micro-batch" +
                        (gather_ ? " (scatter/gather)" : ""));
  if (d_ * c_ > 1) {
    const std::string reduce = shard_ ? "gradient reduce-scatter" : "gradient all-reduce";
    plan_.notes.push_back((overlap_ ? reduce + " per bucket overlapped with the last backward of "
                                               "each stage"
                                    : reduce + " per stage after the flush") +
                          (c_ > 1 ? " (over data x context: " + Str(d_ * c_) + " GPUs)" : ""));
  }
  if (shard_) {
    plan_.notes.push_back(
        "distributed optimizer: Adam on 1/" + Str(d_ * c_) +
        " of each stage's parameters, all-gathered per bucket " +
        (o_.optimizer.overlap_param_gather ? "overlapping the next forward" : "after the step"));
  }
  if (c_ > 1) {
    const double kv =
        ContextRingOf(s_.model, tr_.micro_batch, StorageDType(tr_.precision), c_, t_).kv_bytes;
    plan_.notes.push_back("context parallel ring attention (zig-zag split into " + Str(2 * c_) +
                          " chunks): per GPU per layer per micro-batch " +
                          FormatBytes((c_ - 1) * kv) + " of K/V sent forward, " +
                          FormatBytes(2 * (c_ - 1) * kv) + " of K/V and dK/dV backward");
  }
  if (IsMerakSchedule(o_.schedule)) {
    plan_.notes.push_back(
        "Merak schedule " + o_.schedule +
        ": checkpointed micro-batches are recomputed before their gradient arrives" +
        (LastStageNeverRecomputes(o_.schedule) ? "; the last stage never recomputes" : ""));
  }
  char bubble[120];
  std::snprintf(bubble, sizeof bubble, "ideal bubble (p-1)/(v m + p-1) = %.3g",
                (p_ - 1.0) / (static_cast<double>(v_) * m_ + p_ - 1));
  if (!two_bw_) plan_.notes.push_back(bubble);
  if (o_.classes.enabled) AddClassNotes();
}

const std::vector<LayerCost>& PipelineLowering::LayersOf(int st, int mb) const {
  const int k = mb_workload_.empty() ? -1 : mb_workload_[mb];
  if (k < 0) {
    if (st == p_ - 1 && !plain_last_.layers.empty()) return plain_last_.layers;
    return per_stage_.empty() ? w_.layers : per_stage_[st].layers;
  }
  const MicroBatchWorkload& sized = sized_[k];
  return sized.per_stage.empty() ? sized.workload.layers : sized.per_stage[st].layers;
}

double PipelineLowering::IntoBytes(int j, int mb) const {
  const int k = mb_workload_.empty() ? -1 : mb_workload_[mb];
  return k < 0 ? into_bytes_[j] : sized_into_bytes_[k][j];
}

const std::vector<LayerCost>& PipelineLowering::LayersOf(int st, const Item& it) const {
  return it.checkpoint ? checkpointed_.layers : LayersOf(st, it.micro_batch);
}

int PipelineLowering::ServerOf(int rank) const { return s_.cluster.Locate(rank).server; }

int PipelineLowering::LaneRank(int r, int st, int y) const {
  return layout_.Rank(r, st, y % t_, y / t_);
}

size_t PipelineLowering::Slot(int r, int mb, int j, int y) const {
  return ((static_cast<size_t>(r) * seq_ + mb) * chunks_ + j) * lane_gpus_ + y;
}

}  // namespace stratasim
