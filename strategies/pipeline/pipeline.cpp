// The pipeline planner: stages of tensor-parallel groups, replicated for data parallelism (3D),
// lowered to a TaskGraph following a schedule of pipeline_schedule.cpp.
#include "strategies/pipeline/pipeline.h"

#include <cstdio>
#include <map>
#include <tuple>

#include "core/limits.h"
#include "core/units.h"
#include "models/memory.h"
#include "strategies/fold.h"
#include "strategies/gradient_buckets.h"
#include "strategies/layer_tasks.h"
#include "strategies/parallel_layout.h"
#include "strategies/tensor/megatron.h"
#include "strategies/tensor/tp_layer.h"

namespace stratasim {
namespace {

// One entry of a lane's (replica's stage's) work list: a forward, a backward, or the optimizer
// step that ends batch `iteration`.
struct Item {
  enum Kind { kForward, kBackward, kStep } kind = kForward;
  int micro_batch = 0;  // index within the emitted sequence (spans batches for 2BW)
  int chunk = 0;
  int iteration = 0;
  bool last_backward = false;  // the batch's last backward of this chunk: its gradients are final
};

struct Options {
  int p = 0, t = 1, d = 1, v = 1, m = 0;
  std::string schedule, partition, order;
  bool sp = false, scatter_gather = true, dp_overlap = true;
  double bucket_cap = 0;
  std::vector<Recompute> recompute;  // per stage; empty: the model's choice
};

std::string Str(int n) { return std::to_string(n); }

Recompute ParseRecompute(const std::string& word, OptionReader& opt) {
  if (word == "none") return Recompute::kNone;
  if (word == "selective") return Recompute::kSelective;
  if (word == "full") return Recompute::kFull;
  throw opt.Fail("recompute", "\"" + word +
                                  "\" is not none, selective or full (give one for all stages, "
                                  "or one per stage separated by commas)");
}

Options ReadOptions(const Scenario& s, const StrategySpec& spec, OptionReader& opt) {
  const bool three_d = spec.kind == "3d";
  const TrainingSpec& tr = s.training;
  const int gpus = s.cluster.NumGpus();
  Options o;
  o.p = opt.Int("stages");
  o.t = opt.Int("tensor");
  o.d = three_d ? opt.Int("data") : opt.Int("data", 0);
  const std::string tp = "tensor (" + Str(o.t) + ") x stages (" + Str(o.p) + ")";
  if (o.d > 0) {
    if (static_cast<long>(o.t) * o.p * o.d != gpus) {
      throw opt.Fail("data", tp + " x data (" + Str(o.d) +
                                 ") = " + std::to_string(static_cast<long>(o.t) * o.p * o.d) +
                                 " must equal the GPU count (" + Str(gpus) + ")");
    }
  } else if (gpus % (o.t * o.p) != 0) {
    if (o.t == 1) {
      throw opt.Fail("stages",
                     "stages (" + Str(o.p) + ") must divide the GPU count (" + Str(gpus) + ")");
    }
    throw opt.Fail("tensor",
                   tp + " = " + Str(o.t * o.p) + " must divide the GPU count (" + Str(gpus) + ")");
  } else {
    o.d = gpus / (o.t * o.p);
  }
  if (o.t > 1) CheckTensorDegree(s.model, o.t, opt, "tensor");
  o.sp = opt.Bool("sequence_parallel");
  if (o.sp && o.t == 1) throw opt.Fail("sequence_parallel", "only applies with tensor > 1");
  o.scatter_gather = opt.Bool("scatter_gather");
  o.order = opt.Choice("rank_order");
  o.dp_overlap = opt.Bool("dp_overlap");
  o.bucket_cap = opt.Bytes("bucket_size");

  o.schedule = opt.Choice("schedule");
  if (o.schedule == "interleaved") {
    o.v = opt.Int("virtual_stages");
  } else if (opt.Given("virtual_stages")) {
    throw opt.Fail("virtual_stages", "only applies to schedule interleaved");
  }
  o.m = opt.Int("micro_batches", 0);
  if (o.m == 0) {
    const long per = static_cast<long>(tr.micro_batch) * o.d;
    if (tr.global_batch % per != 0) {
      throw opt.Fail("micro_batches",
                     "default micro_batches = global_batch / (micro_batch x data-parallel "
                     "degree) = " +
                         std::to_string(tr.global_batch) + " / (" + Str(tr.micro_batch) + " x " +
                         Str(o.d) + ") is not an integer");
    }
    o.m = static_cast<int>(tr.global_batch / per);
  }
  if (o.schedule == "interleaved" && o.m % o.p != 0) {
    throw opt.Fail("micro_batches", "interleaved needs micro_batches (" + Str(o.m) +
                                        ") to be a multiple of stages (" + Str(o.p) +
                                        "), as Megatron-LM does");
  }
  o.partition = opt.Text("partition");
  const std::string rc = opt.Text("recompute");
  if (!rc.empty()) {
    size_t at = 0;
    while (at <= rc.size()) {
      size_t comma = rc.find(',', at);
      if (comma == std::string::npos) comma = rc.size();
      std::string word = rc.substr(at, comma - at);
      while (!word.empty() && word.front() == ' ') word.erase(word.begin());
      while (!word.empty() && word.back() == ' ') word.pop_back();
      o.recompute.push_back(ParseRecompute(word, opt));
      at = comma + 1;
    }
    if (o.recompute.size() == 1) o.recompute.assign(o.p, o.recompute.front());
    if (static_cast<int>(o.recompute.size()) != o.p) {
      throw opt.Fail("recompute", "gives " + Str(static_cast<int>(o.recompute.size())) +
                                      " choices but the pipeline has " + Str(o.p) + " stages");
    }
  }
  return o;
}

// The workload one GPU of a stage runs: the model split t ways (tensor parallelism) with the
// recomputation `mode` applied (the model's own choice when `use_model` is set).
Workload StageWorkload(const Scenario& s, const Options& o, bool use_model, Recompute mode) {
  const TrainingSpec& tr = s.training;
  ModelSpec model = s.model;
  if (!use_model) {
    model.recompute = mode;
    model.recompute_layers = 0;
  }
  if (o.t == 1) return BuildWorkload(model, tr.micro_batch, tr.precision, tr.seed);
  ModelSpec plain = s.model;
  plain.recompute = Recompute::kNone;
  return TensorParallelShard(BuildWorkload(plain, tr.micro_batch, tr.precision, tr.seed), o.t, o.sp,
                             model);
}

}  // namespace

const OptionSpecs& PipelineOptions(bool three_d) {
  // Stage counts, degrees and micro-batches are bounded by what a cluster and a run can hold.
  constexpr int kMaxMicroBatches = 1 << 24;
  auto make = [](bool three_d) {
    return OptionSpecs{
        three_d ? Integer("stages", 1, limits::kMaxGpus, "the number of pipeline stages (>= 1)")
                : Integer("stages", 2, limits::kMaxGpus, "the number of pipeline stages (>= 2)"),
        three_d ? Integer("tensor", 1, limits::kMaxGpus, "the tensor-parallel degree")
                : Integer("tensor", 1, limits::kMaxGpus,
                          "each stage's layers split over a tensor-parallel group of t GPUs as "
                          "the tensor strategy does; t must divide the model's heads")
                      .Default("1"),
        three_d ? Integer("data", 1, limits::kMaxGpus, "the data-parallel degree")
                : Integer("data", 1, limits::kMaxGpus,
                          "the data-parallel degree; tensor x stages x data must equal the GPUs")
                      .Derived("GPUs / (tensor x stages), which must be an integer"),
        OneOf("rank_order", ParallelLayout::Orders(),
              "a permutation of t, p, d, fastest-varying first: tpd puts a tensor group on "
              "consecutive ranks, then the stages of a replica, then the replicas "
              "(strategies/parallel_layout.h)")
            .Default("tpd"),
        Flag("sequence_parallel", "Korthikanti et al. 2022's sequence parallelism (tensor > 1)")
            .Default("false"),
        Flag("scatter_gather",
             "tensor > 1 without sequence parallelism: each GPU of a tensor group sends 1/t of "
             "the boundary tensor and the receiving group all-gathers it (Narayanan et al. 2021, "
             "SC, 4.1)")
            .Default("true"),
        Integer("micro_batches", 1, kMaxMicroBatches,
                "m; samples per iteration are m x micro_batch x data")
            .Derived("global_batch / (micro_batch x data), which must be an integer"),
        OneOf("schedule", {"gpipe", "1f1b", "interleaved", "pipedream_2bw"},
              "gpipe (Huang et al. 2019), 1f1b (PipeDream-Flush), interleaved (Megatron-LM's "
              "interleaved 1F1B; micro_batches a multiple of stages) or pipedream_2bw (1F1B "
              "without a flush, two weight versions)")
            .Default(three_d ? "1f1b" : "gpipe"),
        Integer("virtual_stages", 2, limits::kMaxGpus,
                "v chunks per stage, for schedule interleaved only")
            .Default("2"),
        FreeText("partition",
                 "even: contiguous stages minimising the largest forward FLOPs of a stage (for "
                 "interleaved, chunks balancing each stage's sum); or layer counts per stage (per "
                 "chunk for interleaved) over the repeated blocks, such as \"6,6,6,6\", the "
                 "embedding joining the first stage and the head the last")
            .Default("even"),
        FreeText("recompute",
                 "none, selective or full, for all stages or one per stage (\"full,none\"); "
                 "empty: the model's recompute")
            .Default(""),
        Flag("dp_overlap",
             "each stage's data-parallel all-reduce runs in buckets launched as the batch's last "
             "backward of each chunk finishes their layers (Megatron-LM's "
             "--overlap-grad-reduce); false: one all-reduce after the flush")
            .Default("true"),
        Size("bucket_size", "gradient bucket cap of the data-parallel all-reduce").Default("25MiB"),
    };
  };
  static const OptionSpecs pipeline = make(false), three_d_options = make(true);
  return three_d ? three_d_options : pipeline;
}

Plan PlanPipeline(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, PipelineOptions(spec.kind == "3d"));
  const Options o = ReadOptions(s, spec, opt);
  opt.Finish();
  const TrainingSpec& tr = s.training;
  const int gpus = s.cluster.NumGpus();
  const int p = o.p, t = o.t, d = o.d, v = o.v, m = o.m;
  const ParallelLayout layout{t, p, d, o.order};

  const Workload w = StageWorkload(s, o, true, s.model.recompute);
  std::vector<Workload> per_stage;  // only with a per-stage recompute choice
  for (Recompute mode : o.recompute) per_stage.push_back(StageWorkload(s, o, false, mode));
  auto layers_of = [&](int st) -> const std::vector<LayerCost>& {
    return per_stage.empty() ? w.layers : per_stage[st].layers;
  };

  const int chunks = p * v;
  std::vector<int> bounds;
  if (o.partition == "even") {
    if (chunks > static_cast<int>(w.layers.size())) {
      throw opt.Fail("stages", "the model has " + std::to_string(w.layers.size()) +
                                   " layers, fewer than stages x virtual_stages (" + Str(chunks) +
                                   ")");
    }
    bounds = v > 1 ? EvenInterleavedPartition(w, p, v) : EvenPartition(w, chunks);
  } else {
    bounds = PartitionFromCounts(w, o.partition, chunks, opt);
  }

  // Per global chunk: parameters and the bytes crossing into it (per GPU of the tensor group
  // when sequence parallelism already splits them).
  std::vector<double> chunk_params(chunks, 0), into_bytes(chunks, 0);
  const double fallback_bytes =
      tr.micro_batch * w.tokens_per_sample * s.model.hidden * BytesPerElement(tr.precision);
  for (int j = 0; j < chunks; ++j) {
    for (int i = bounds[j]; i < bounds[j + 1]; ++i) chunk_params[j] += w.layers[i].params;
    const double in = w.layers[bounds[j]].input_bytes;
    into_bytes[j] = in > 0 ? in : fallback_bytes;
  }
  std::vector<double> stage_params(p, 0);
  for (int j = 0; j < chunks; ++j) stage_params[j % p] += chunk_params[j];
  // Megatron-LM's scatter/gather optimisation (Narayanan et al. 2021, SC, §4.1): each GPU of
  // the sending tensor group sends 1/t of the boundary tensor, which the receiving group
  // all-gathers over its fast links. Sequence parallelism's boundary is already split.
  const bool gather = t > 1 && !o.sp && o.scatter_gather;
  const double send_fraction = gather ? 1.0 / t : 1.0;

  Plan plan;
  plan.graph = TaskGraph(gpus);
  if (s.simulation.max_tasks > 0) plan.graph.SetTaskLimit(s.simulation.max_tasks);
  plan.samples_per_iteration = static_cast<double>(m) * tr.micro_batch * d;
  plan.tokens_per_sample = w.tokens_per_sample;
  TaskGraph& g = plan.graph;
  const int compute = g.Stream("compute");
  const int fwd_send = g.Stream("p2p_fwd_send");
  const int fwd_recv = g.Stream("p2p_fwd_recv");
  const int bwd_send = g.Stream("p2p_bwd_send");
  const int bwd_recv = g.Stream("p2p_bwd_recv");
  const int dp = g.Stream("dp");
  TensorLayerEmitter em(g, tr.precision, compute, o.sp,
                        static_cast<double>(tr.micro_batch) * s.model.sequence * s.model.hidden *
                            BytesPerElement(tr.precision));
  const double grad_bytes = TrainingBytesPerParam(tr.precision);
  plan.rank_stage.assign(gpus, 0);
  for (int r = 0; r < d; ++r) {
    for (int st = 0; st < p; ++st) {
      for (int x = 0; x < t; ++x) plan.rank_stage[layout.Rank(r, st, x)] = st;
    }
  }

  // Folding (strategies/fold.h): replicas are blocks of t x p consecutive ranks only in rank
  // order tpd. Replicas [0, emitted) are planned in full; the others only as mirrors of the
  // traffic that can meet another block's.
  FoldDecision folding = DecideFold(s, ReplicaLayout{d, t * p, t});
  if (folding.fold && o.order != "tpd") {
    folding = FoldDecision{false, d, 0, "rank order " + o.order + " interleaves the replicas"};
  }
  const bool fold = folding.fold;
  const int emitted = folding.block_replicas;
  const int block = folding.block_gpus;
  // Set before any task, so that figures measured as tasks retire know it (docs/scale.md).
  if (fold) g.SetFold(FoldRepresentatives(gpus, block));
  const auto server_of = [&](int rank) { return s.cluster.Locate(rank).server; };

  const bool two_bw = o.schedule == "pipedream_2bw";
  for (int r = 0; r < emitted; ++r) {
    for (int st = 0; st < p; ++st) {
      for (int x = 0; x < t; ++x) {
        TaskPlace at{layout.Rank(r, st, x), compute, 0, ""};
        AddModelStates(g, at, stage_params[st], tr.precision);
        if (two_bw) {
          // The second weight version PipeDream-2BW keeps for in-flight micro-batches.
          AddMemory(g, at, "weights_stashed", "weights",
                    AdamStateBytes(stage_params[st], tr.precision).weights);
        }
      }
    }
  }

  // Gradient buckets of each chunk (layer indices global), for the overlapped all-reduce.
  std::vector<std::vector<GradientBucket>> chunk_buckets(chunks);
  for (int j = 0; j < chunks; ++j) {
    const std::vector<LayerCost> part(w.layers.begin() + bounds[j],
                                      w.layers.begin() + bounds[j + 1]);
    chunk_buckets[j] = MakeGradientBuckets(part, grad_bytes, o.bucket_cap);
    for (GradientBucket& b : chunk_buckets[j]) b.ready_after_layer += bounds[j];
  }
  const bool overlap = o.dp_overlap && d > 1;

  const int iterations = tr.warmup_iterations + tr.measured_iterations;
  // Work lists: one emission round per iteration with a flush; one round for all with 2BW.
  const int rounds = two_bw ? 1 : iterations;
  std::vector<TaskId> cur(gpus, -1);  // per rank: the task the next one follows
  for (int round = 0; round < rounds; ++round) {
    const int seq = two_bw ? m * iterations : m;  // micro-batches in this round
    std::vector<std::vector<Item>> lanes(static_cast<size_t>(emitted) * p);
    for (int st = 0; st < p; ++st) {
      std::vector<Item> items;
      std::map<std::pair<int, int>, size_t> last_bwd;  // (iteration, chunk) -> index
      for (const PipelineOp& op : PipelineSchedule(o.schedule, p, st, seq, v)) {
        const int iteration = two_bw ? op.micro_batch / m : round;
        if (!op.forward) last_bwd[{iteration, op.chunk}] = items.size();
        items.push_back(
            {op.forward ? Item::kForward : Item::kBackward, op.micro_batch, op.chunk, iteration});
        if (two_bw && !op.forward && op.micro_batch % m == m - 1) {
          items.push_back({Item::kStep, 0, 0, iteration});
        }
      }
      for (const auto& [key, index] : last_bwd) items[index].last_backward = true;
      if (!two_bw) items.push_back({Item::kStep, 0, 0, round});
      for (int r = 0; r < emitted; ++r) lanes[r * p + st] = items;
    }
    std::vector<size_t> next(lanes.size(), 0);
    // Per lane and tensor index: the lane's last backward kernel.
    std::vector<TaskId> lane_last(lanes.size() * t, -1);
    const size_t slots = static_cast<size_t>(d) * seq * chunks;
    std::vector<TaskId> act_in(slots * t, -1), grad_in(slots * t, -1);
    auto slot = [&](int r, int mb, int j, int x) {
      return ((static_cast<size_t>(r) * seq + mb) * chunks + j) * t + x;
    };
    // Overlapped data parallelism: per (stage, chunk, iteration), per replica, the task after
    // which each layer's gradient is final on each tensor index; buckets go out once every
    // replica has produced them.
    std::map<std::tuple<int, int, int>, std::vector<std::vector<TaskId>>> grads;
    std::vector<std::vector<TaskId>> dp_members(gpus);  // awaited by the rank's next step

    auto ready = [&](int lane) {
      const Item& it = lanes[lane][next[lane]];
      const int r = lane / p, st = lane % p, j = it.chunk * p + st;
      if (it.kind == Item::kForward) return j == 0 || act_in[slot(r, it.micro_batch, j, 0)] >= 0;
      if (it.kind == Item::kBackward) {
        return j == chunks - 1 || grad_in[slot(r, it.micro_batch, j, 0)] >= 0;
      }
      for (int q = 0; q < emitted; ++q) {  // the step waits for every replica of the stage
        const int other = q * p + st;
        if (next[other] >= lanes[other].size()) return false;
        const Item& oi = lanes[other][next[other]];
        if (oi.kind != Item::kStep || oi.iteration != it.iteration) return false;
      }
      return true;
    };

    // Point-to-point transfer of a boundary tensor from every GPU of (r, from) to the GPU of
    // the same tensor index in (r, to); records the receives in `into`.
    auto transfer = [&](int r, int from, int to, double bytes, bool forward,
                        const std::string& what, const TaskPlace& at, std::vector<TaskId>& into,
                        size_t first_slot) {
      for (int x = 0; x < t; ++x) {
        Task send, recv;
        send.iteration = recv.iteration = at.iteration;
        send.phase = recv.phase = Phase::kCommunication;
        send.category = recv.category = "pp";
        send.stream = forward ? fwd_send : bwd_send;
        recv.stream = forward ? fwd_recv : bwd_recv;
        send.rank = layout.Rank(r, from, x);
        recv.rank = layout.Rank(r, to, x);
        send.name = Name::Join(at.prefix, "send_" + what);
        recv.name = Name::Join(at.prefix, "recv_" + what);
        send.deps = {cur[send.rank]};
        const auto [s_id, r_id] =
            g.AddTransfer(send.rank, recv.rank, bytes * send_fraction, send, recv);
        into[first_slot + x] = r_id;
        // The folded replicas' copies of a transfer that leaves its server.
        if (!fold || server_of(send.rank) == server_of(recv.rank)) continue;
        for (int q = r + emitted; q < d; q += emitted) {
          send.rank = layout.Rank(q, from, x);
          recv.rank = layout.Rank(q, to, x);
          send.deps = {};
          const auto [ms, mr] =
              g.AddTransfer(send.rank, recv.rank, bytes * send_fraction, send, recv);
          // Its counterpart: the block-0 transfer at the same position, replica q mod emitted.
          g.SetMirror(ms, s_id);
          g.SetMirror(mr, r_id);
        }
      }
    };

    // Sets cur[] of the group's ranks to their received input, all-gathered when scattered.
    auto receive = [&](const std::vector<int>& group, const std::vector<TaskId>& from,
                       size_t first_slot, double bytes, const TaskPlace& at,
                       const std::string& what) {
      for (int x = 0; x < t; ++x) cur[group[x]] = from[first_slot + x];
      if (!gather) return;
      const std::vector<TaskId> member_of =
          AddGroupCollectives(g, {group}, CollectiveKind::kAllGather, bytes, tr.precision, compute,
                              at.iteration, at.prefix + "gather_" + what, cur, "pp");
      for (int x : group) cur[x] = member_of[x];
    };

    // A data-parallel all-reduce of `ranks`, member q after after[q]; awaited by the next step.
    std::vector<TaskId> after_of(gpus, -1);
    auto all_reduce = [&](const std::vector<int>& ranks, double bytes, int iteration,
                          const std::string& name, const std::vector<TaskId>& after) {
      for (size_t q = 0; q < ranks.size(); ++q) after_of[ranks[q]] = after[q];
      const std::vector<TaskId> member_of =
          AddGroupCollectives(g, {ranks}, CollectiveKind::kAllReduce, bytes, tr.precision, dp,
                              iteration, name, after_of);
      for (int r : ranks) {
        if (fold && r >= block) {
          g.SetMirror(member_of[r], member_of[r % block]);
        } else {
          dp_members[r].push_back(member_of[r]);
        }
      }
    };

    // Every replica produced chunk j's final gradients: all-reduce them bucket by bucket.
    auto reduce_chunk = [&](int st, int j, int iteration,
                            const std::vector<std::vector<TaskId>>& ready_by_replica) {
      const int first = bounds[j];
      for (size_t k = 0; k < chunk_buckets[j].size(); ++k) {
        const GradientBucket& b = chunk_buckets[j][k];
        for (int x = 0; x < t; ++x) {
          std::vector<TaskId> after(d);
          for (int q = 0; q < d; ++q) {
            after[q] =
                q < emitted ? ready_by_replica[q][(b.ready_after_layer - first) * t + x] : -1;
          }
          all_reduce(layout.DataGroup(st, x), b.params * grad_bytes, iteration,
                     "it" + Str(iteration) + "/allreduce/chunk" + Str(j) + "/bucket" + Str(k),
                     after);
        }
      }
    };

    auto emit = [&](int lane) {
      const Item& it = lanes[lane][next[lane]];
      const int r = lane / p, st = lane % p, j = it.chunk * p + st;
      const std::string prefix = "it" + Str(it.iteration) + "/mb" + Str(it.micro_batch) + "/" +
                                 (v > 1 ? "c" + Str(it.chunk) + "/" : "");
      TaskPlace at{layout.Rank(r, st, 0), compute, it.iteration, prefix};
      const std::vector<int> group = layout.TensorGroup(r, st);
      const std::vector<std::vector<int>> groups{group};
      const std::vector<LayerCost>& layers = layers_of(st);
      if (it.kind == Item::kForward) {
        if (j == 0) {
          for (int x : group) cur[x] = -1;
        } else {
          receive(group, act_in, slot(r, it.micro_batch, j, 0), into_bytes[j], at, "activation");
        }
        for (int i = bounds[j]; i < bounds[j + 1]; ++i) {
          em.Forward(layers[i], groups, it.iteration, prefix, cur);
        }
        if (j + 1 < chunks) {
          transfer(r, st, (j + 1) % p, into_bytes[j + 1], true, "activation", at, act_in,
                   slot(r, it.micro_batch, j + 1, 0));
        }
        ++next[lane];
      } else if (it.kind == Item::kBackward) {
        if (j == chunks - 1) {
          for (int x : group) cur[x] = -1;
        } else {
          receive(group, grad_in, slot(r, it.micro_batch, j, 0), into_bytes[j + 1], at, "gradient");
        }
        const int n_layers = bounds[j + 1] - bounds[j];
        std::vector<TaskId> ready_after(static_cast<size_t>(n_layers) * t, -1);
        for (int i = bounds[j + 1] - 1; i >= bounds[j]; --i) {
          em.Backward(layers[i], groups, it.iteration, prefix, cur);
          for (int x = 0; x < t; ++x) ready_after[(i - bounds[j]) * t + x] = cur[group[x]];
        }
        for (int x = 0; x < t; ++x) lane_last[lane * t + x] = cur[group[x]];
        if (j > 0) {
          transfer(r, st, (j - 1) % p, into_bytes[j], false, "gradient", at, grad_in,
                   slot(r, it.micro_batch, j - 1, 0));
        }
        if (overlap && it.last_backward) {
          auto& per_replica = grads[{st, j, it.iteration}];
          per_replica.resize(emitted);
          per_replica[r] = ready_after;
          bool all = true;
          for (const auto& ready_of : per_replica) all = all && !ready_of.empty();
          if (all) {
            reduce_chunk(st, j, it.iteration, per_replica);
            grads.erase({st, j, it.iteration});
          }
        }
        ++next[lane];
      } else {
        // The flush reached on every replica of this stage: without overlap, one gradient
        // all-reduce of the whole stage per tensor index; then every replica's Adam step.
        const int iteration = it.iteration;
        if (d > 1 && !overlap) {
          for (int x = 0; x < t; ++x) {
            std::vector<TaskId> after(d);
            for (int q = 0; q < d; ++q)
              after[q] = q < emitted ? lane_last[(q * p + st) * t + x] : -1;
            all_reduce(layout.DataGroup(st, x), stage_params[st] * grad_bytes, iteration,
                       "it" + Str(iteration) + "/allreduce/stage" + Str(st), after);
          }
        }
        for (int q = 0; q < emitted; ++q) {
          const int other = q * p + st;
          for (int x = 0; x < t; ++x) {
            const int rank = layout.Rank(q, st, x);
            Task step = AdamStepTask(stage_params[st], tr.precision);
            step.rank = rank;
            step.stream = compute;
            step.iteration = iteration;
            step.name = "it" + Str(iteration) + "/adam";
            step.deps = dp_members[rank];
            dp_members[rank].clear();
            if (lane_last[other * t + x] >= 0) step.deps.push_back(lane_last[other * t + x]);
            lane_last[other * t + x] = g.Add(std::move(step));
          }
          ++next[other];
        }
      }
    };

    bool done = false;
    while (!done) {
      done = true;
      bool progress = false;
      for (int lane = 0; lane < static_cast<int>(lanes.size()); ++lane) {
        while (next[lane] < lanes[lane].size() && ready(lane)) {
          emit(lane);
          progress = true;
        }
        if (next[lane] < lanes[lane].size()) done = false;
      }
      if (!done && !progress) throw Error("pipeline schedule " + o.schedule + " deadlocked");
    }
  }

  plan.fold = DescribeFold(folding, gpus);

  std::string split;
  for (int j = 0; j < chunks; ++j) split += (j ? "," : "") + Str(bounds[j + 1] - bounds[j]);
  std::string shape = Str(p) + " stages x " + Str(d) + " data-parallel replica(s)";
  if (t > 1) {
    shape = "tensor " + Str(t) + (o.sp ? " (sequence parallel)" : "") + " x " + shape +
            ", rank order " + o.order;
  }
  plan.notes.push_back(shape + ", schedule " + o.schedule +
                       (v > 1 ? " with " + Str(v) + " virtual stages" : "") + ", " + Str(m) +
                       " micro-batch(es) of " + Str(tr.micro_batch));
  plan.notes.push_back("workload layers per " + std::string(v > 1 ? "chunk" : "stage") + ": " +
                       split + "; " + FormatBytes(into_bytes[chunks - 1] * send_fraction) +
                       " sent per GPU per boundary per micro-batch" +
                       (gather ? " (scatter/gather)" : ""));
  if (d > 1) {
    plan.notes.push_back(overlap ? "gradient all-reduce per bucket overlapped with the last "
                                   "backward of each stage"
                                 : "gradient all-reduce per stage after the flush");
  }
  char bubble[120];
  std::snprintf(bubble, sizeof bubble, "ideal bubble (p-1)/(v m + p-1) = %.3g",
                (p - 1.0) / (static_cast<double>(v) * m + p - 1));
  if (!two_bw) plan.notes.push_back(bubble);
  return plan;
}

}  // namespace stratasim
