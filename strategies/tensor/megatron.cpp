#include "strategies/tensor/megatron.h"

#include <cstdio>
#include <set>

#include "core/limits.h"
#include "core/units.h"
#include "models/fp8.h"
#include "models/memory.h"
#include "models/ops.h"
#include "models/recompute.h"
#include "strategies/batching.h"
#include "strategies/distributed_optimizer.h"
#include "strategies/fold.h"
#include "strategies/gradient_buckets.h"
#include "strategies/layer_tasks.h"
#include "strategies/tensor/tp_layer.h"

namespace stratasim {
namespace {

// Replicated in plain tensor parallelism, split along the sequence with sequence parallelism.
const std::set<std::string> kSequenceOps = {"norm1",     "norm2",      "residual1",
                                            "residual2", "final_norm", "embed_dropout"};

void Scale(KernelCost& c, double f) {
  c.flops *= f;
  c.bytes *= f;
}

// Divides an op's work and saved activations by t (heads, MLP columns or vocabulary split).
void Split(OpCost& op, double t) {
  for (KernelCost* c : {&op.forward, &op.backward_input, &op.backward_weight}) {
    Scale(*c, 1 / t);
    if (c->gemm.known()) c->gemm.batch /= t;
  }
  op.saved_bytes /= t;
}

// A transformer layer, or one of its halves (models/sub_layers.h): the attention half has the
// QKV projection, the MLP half its first projection or MoE's router.
bool IsTransformerLayer(const LayerCost& L) {
  for (const OpCost& op : L.ops) {
    if (op.name == "qkv" || op.name == "mlp_up" || op.name == "gate_up" || op.name == "router") {
      return true;
    }
  }
  return false;
}

}  // namespace

Workload TensorParallelShard(const Workload& full, int tensor, bool sequence_parallel,
                             const ModelSpec& model) {
  const double t = tensor, e = BytesPerElement(full.dtype);
  Workload w = full;
  w.params = 0;
  for (LayerCost& L : w.layers) {
    const bool transformer = IsTransformerLayer(L);
    for (OpCost& op : L.ops) {
      const GemmShape s = op.forward.gemm;  // C[m, n] = A[m, k] B[k, n]
      if (IsColumnParallel(op) && s.known()) {
        // Each GPU computes n/t output columns from the whole input, which it keeps (split
        // along the sequence with sequence parallelism); what the op saves beyond its input
        // (Q, K, V) is split.
        // An FP8 GEMM saves its input in FP8 (models/fp8.h) and stays FP8 once split.
        const bool fp8 = IsFp8Gemm(op);
        const double input = (fp8 ? BytesPerElement(DType::kFP8) : e) * s.m * s.k;
        const double extra = op.saved_bytes > input ? op.saved_bytes - input : 0;
        OpCost split = Linear(op.name, s.m, s.k, s.n / t, e);
        if (fp8) MakeFp8Gemm(split);
        split.saved_bytes = (sequence_parallel ? input / t : input) + extra / t;
        split.attention_core = op.attention_core;
        op = split;
      } else if (IsRowParallel(op) && s.known()) {
        OpCost split = Linear(op.name, s.m, s.k / t, s.n, e);
        if (IsFp8Gemm(op)) MakeFp8Gemm(split);
        split.saved_bytes = op.saved_bytes / t;
        split.attention_core = op.attention_core;
        op = split;
      } else if (IsRowParallel(op)) {
        // The vocabulary-parallel lookup writes a full (masked) output on every GPU.
      } else if (kSequenceOps.count(op.name) > 0) {
        if (sequence_parallel) Split(op, t);
      } else if (transformer || op.name == "cross_entropy") {
        Split(op, t);  // attention core, activations, rotary: per head or per column
      }
    }
    RefreshFp8Bookkeeping(L);  // the casts follow their GEMMs' shards
    if (transformer) {
      L.params /= t;
      if (sequence_parallel) L.input_bytes /= t;
    } else {
      // Embedding table and untied output weights split over the vocabulary; the rest (norms,
      // BERT's head transform) replicated.
      double vocab_params = 0;
      for (const OpCost& op : L.ops) {
        const GemmShape& s = op.forward.gemm;
        if (op.name == "logits" && s.known() && L.params >= s.k * s.n * t) {
          vocab_params = s.k * s.n * t;  // untied: the full table (s.n is already split)
        }
      }
      if (L.name == "embedding") vocab_params = L.params;
      L.params = L.params - vocab_params + vocab_params / t;
    }
    w.params += L.params;
  }
  ApplyRecompute(w, model.recompute, model.recompute_layers);
  return w;
}

const OptionSpecs& TensorParallelOptions() {
  static const OptionSpecs options = {
      Integer("degree", 1, limits::kMaxGpus,
              "the tensor-parallel degree t; must divide the GPU count and the model's attention "
              "(and key/value) heads")
          .Derived("the GPUs of a server of the first group"),
      Flag("sequence_parallel",
           "Korthikanti et al. 2022 4.2.2: all-reduces become reduce-scatter + all-gather, and "
           "norms, dropouts and residuals run on s/t of the sequence")
          .Default("false"),
      Size("bucket_size",
           "gradient buckets of the data-parallel all-reduce among the GPUs/t replicas, as DDP's")
          .Default("25MiB"),
      TpCommOverlapOption(),
  };
  static const OptionSpecs joined = Join(options, DataParallelOptimizerOptions());
  return joined;
}

Plan PlanTensorParallel(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, TensorParallelOptions());
  const int gpus = s.cluster.NumGpus();
  const int per_server = s.cluster.groups.empty() ? 1 : s.cluster.groups.front().gpus_per_server;
  const int t = opt.Int("degree", std::min(per_server, gpus));
  const bool sp = opt.Bool("sequence_parallel");
  const double bucket_cap = opt.Bytes("bucket_size");
  const bool tp_overlap = opt.Bool("tp_comm_overlap");
  if (tp_overlap && !sp) {
    throw opt.Fail("tp_comm_overlap",
                   "needs sequence_parallel: true (it overlaps the "
                   "all-gathers and reduce-scatters of sequence parallelism)");
  }
  const DataParallelOptimizer dpo = ReadDataParallelOptimizer(opt);
  opt.Finish();

  const ModelSpec& m = s.model;
  if (gpus % t != 0) {
    throw opt.Fail("degree", "degree t=" + std::to_string(t) + " must divide the GPU count (" +
                                 std::to_string(gpus) + ")");
  }
  CheckTensorDegree(m, t, opt, "degree");
  const int d = gpus / t;
  const TrainingSpec& tr = s.training;
  const int micro_batches = MicroBatchesPerReplica(
      tr, d,
      "tensor parallelism of degree " + std::to_string(t) + " on " + std::to_string(gpus) + " GPUs",
      opt);

  ModelSpec plain = m;
  plain.recompute = Recompute::kNone;
  const Workload full = BuildWorkload(plain, tr.micro_batch, tr.precision, tr.seed);
  const Workload w = TensorParallelShard(full, t, sp, m);
  const int layers = static_cast<int>(w.layers.size());

  Plan plan;
  plan.graph = TaskGraph(gpus);
  if (s.simulation.max_tasks > 0) plan.graph.SetTaskLimit(s.simulation.max_tasks);
  plan.samples_per_iteration = static_cast<double>(tr.global_batch);
  plan.tokens_per_sample = w.tokens_per_sample;
  TaskGraph& g = plan.graph;
  const int compute = g.Stream("compute");
  TensorLayerEmitter em(g, StorageDType(tr.precision), compute, sp,
                        static_cast<double>(tr.micro_batch) * m.sequence * m.hidden *
                            BytesPerElement(StorageDType(tr.precision)));
  if (tp_overlap) em.OverlapCommunication();
  // Folding (strategies/fold.h): only the first block of replicas computes; the others keep
  // their members of the data-parallel all-reduces as mirrors.
  const FoldDecision folding = DecideFold(s, ReplicaLayout{d, t, t});
  const int block = folding.fold ? folding.block_gpus : gpus;
  plan.fold = DescribeFold(folding, gpus);
  // Set before any task, so that figures measured as tasks retire know it (docs/scale.md).
  if (folding.fold) g.SetFold(FoldRepresentatives(gpus, block));
  std::vector<std::vector<int>> tensor_groups;
  std::vector<TaskId> last(gpus, -1);
  const int comm = g.Stream("comm");
  bool crosses_servers = false;
  for (int k = 0; k < block / t; ++k) {
    std::vector<int> ranks;
    for (int j = 0; j < t; ++j) ranks.push_back(k * t + j);
    crosses_servers = crosses_servers || s.cluster.Locate(ranks.front()).server !=
                                             s.cluster.Locate(ranks.back()).server;
    tensor_groups.push_back(ranks);
  }

  // Gradient buckets of the data-parallel all-reduce, in reverse layer order (as DDP).
  const double grad_bytes = dpo.GradBytes(tr.precision);
  const std::vector<GradientBucket> buckets = MakeGradientBuckets(w.layers, grad_bytes, bucket_cap);
  // The distributed optimizer shards the step and its states d ways (a no-op with d = 1).
  const bool shard = dpo.distributed && d > 1;
  const StateSharding sharding{1, 1, dpo.OptimizerShards(d)};
  const std::vector<int> bucket_of = BucketOfLayer(buckets, layers);
  std::vector<std::vector<int>> data_groups(t);  // ranks j, j + t, j + 2t...
  for (int j = 0; j < t; ++j) {
    for (int q = 0; q < d; ++q) data_groups[j].push_back(q * t + j);
  }
  // Per bucket, per rank: the previous step's overlapped parameter all-gather, which the first
  // forward of the bucket's layers waits for.
  std::vector<std::vector<TaskId>> gathered;

  const int iterations = tr.warmup_iterations + tr.measured_iterations;
  for (int it = 0; it < iterations; ++it) {
    if (it == 0) {
      for (int r = 0; r < block; ++r) {
        AddModelStates(g, TaskPlace{r, compute, 0, ""}, w.params, tr.precision, sharding,
                       dpo.StateGradBytes());
      }
    }
    std::vector<std::vector<TaskId>> grads_ready(layers, std::vector<TaskId>(gpus, -1));
    for (int mb = 0; mb < micro_batches; ++mb) {
      const std::string prefix = "it" + std::to_string(it) + "/mb" + std::to_string(mb) + "/";
      for (int i = 0; i < layers; ++i) {
        const TaskId from = g.next_id();
        em.Forward(w.layers[i], tensor_groups, it, prefix, last);
        if (mb == 0 && !gathered.empty() && bucket_of[i] >= 0) {
          AwaitFirstTasks(g, from, compute, gathered[bucket_of[i]]);
        }
      }
      for (int i = layers - 1; i >= 0; --i) {
        em.Backward(w.layers[i], tensor_groups, it, prefix, last);
        grads_ready[i] = last;
      }
    }
    gathered.clear();
    std::vector<std::vector<TaskId>> reduced;  // per bucket, per rank
    if (d > 1) {
      for (size_t k = 0; k < buckets.size(); ++k) {
        reduced.push_back(AddGroupCollectives(
            g, data_groups, shard ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
            buckets[k].params * grad_bytes, dpo.GradDType(tr.precision), comm, it,
            "it" + std::to_string(it) + (shard ? "/reduce_scatter/bucket" : "/allreduce/bucket") +
                std::to_string(k),
            grads_ready[buckets[k].ready_after_layer]));
        for (int r = block; r < gpus; ++r)
          g.SetMirror(reduced.back()[r], reduced.back()[r % block]);
      }
    }
    for (int r = 0; r < block; ++r) {
      Task step = AdamStepTask(shard ? w.params / d : w.params, tr.precision);
      step.rank = r;
      step.stream = compute;
      step.iteration = it;
      step.name = "it" + std::to_string(it) + "/adam";
      for (const auto& members : reduced) step.deps.push_back(members[r]);
      last[r] = g.Add(std::move(step));
    }
    if (shard) {
      // The updated parameters, bucket by bucket in the order the next forward uses them.
      gathered.assign(buckets.size(), {});
      for (size_t k = buckets.size(); k-- > 0;) {
        const std::vector<TaskId> ag = AddGroupCollectives(
            g, data_groups, CollectiveKind::kAllGather,
            buckets[k].params * TrainingBytesPerParam(tr.precision), StorageDType(tr.precision),
            dpo.overlap_param_gather ? comm : compute, it,
            "it" + std::to_string(it) + "/param_all_gather/bucket" + std::to_string(k), last);
        for (int r = block; r < gpus; ++r) g.SetMirror(ag[r], ag[r % block]);
        if (dpo.overlap_param_gather) {
          gathered[k] = ag;
        } else {
          for (int r = 0; r < block; ++r) last[r] = ag[r];
        }
      }
      if (!dpo.overlap_param_gather) gathered.clear();
    }
  }

  char buf[240];
  std::snprintf(buf, sizeof buf,
                "tensor parallel t=%d%s x data parallel d=%d; %d micro-batch(es) of %d per "
                "replica; %.3g M parameters per GPU",
                t, sp ? " with sequence parallelism" : "", d, micro_batches, tr.micro_batch,
                w.params / 1e6);
  plan.notes.push_back(buf);
  if (crosses_servers) plan.notes.push_back("tensor groups span servers");
  if (shard) {
    plan.notes.push_back("distributed optimizer: " + std::to_string(buckets.size()) +
                         " gradient bucket(s) reduce-scattered over the " + std::to_string(d) +
                         " replicas, Adam on 1/" + std::to_string(d) +
                         " of the parameters, parameters " +
                         (dpo.overlap_param_gather ? "all-gathered overlapping the next forward"
                                                   : "all-gathered after the step"));
  }
  plan.notes.push_back(
      "memory per GPU: model states " +
      FormatBytes(AdamStateBytes(w.params, tr.precision, sharding, dpo.StateGradBytes()).Total()) +
      ", activations " + FormatBytes(PeakActivationBytes(w, 1)) + " (recompute " +
      std::string(ToString(w.recompute)) + ")");
  return plan;
}

}  // namespace stratasim
