#include "strategies/sharded/zero.h"

#include <cstdio>

#include "core/units.h"
#include "models/memory.h"
#include "models/workload.h"
#include "strategies/batching.h"
#include "strategies/fold.h"
#include "strategies/gradient_buckets.h"
#include "strategies/layer_tasks.h"
#include "strategies/sharded/fsdp_units.h"
#include "strategies/sharded/shard_groups.h"

namespace stratasim {

const OptionSpecs& ZeroOptions(int stage) {
  const OptionSpec shard_group =
      OneOf("shard_group", {"all", "server"},
            "all: shard over every GPU. server: shard over the GPUs of each server and replicate "
            "across servers (FSDP HYBRID_SHARD, Zhao et al. 3.2.2): after the last micro-batch's "
            "reduce-scatters each shard is all-reduced between the ranks that hold it, once per "
            "iteration; needs servers with equal GPU counts")
          .Default("all");
  static const OptionSpecs stage12 = {
      shard_group,
      Size("bucket_size", "gradient bucket cap, as DDP's").Default("25MiB"),
  };
  static const OptionSpecs stage3 = {
      shard_group,
      OneOf("unit", {"layer", "model"},
            "layer wraps each workload layer (embedding, transformer layer, head) as an FSDP "
            "unit; model wraps the whole model as one unit (one all-gather of everything: "
            "least latency, most memory)")
          .Default("layer"),
      Flag("prefetch",
           "issue unit i+1's all-gather when unit i's compute starts, overlapping it (FSDP "
           "forward/backward prefetch, one unit ahead); false: when unit i ends, so every "
           "all-gather is exposed")
          .Default("true"),
  };
  return stage < 3 ? stage12 : stage3;
}

Plan PlanZero(const Scenario& s, const StrategySpec& spec) {
  const int stage = spec.kind == "zero1"   ? 1
                    : spec.kind == "zero2" ? 2
                    : spec.kind == "zero3" ? 3
                                           : 0;
  OptionReader opt(spec, ZeroOptions(stage));
  if (stage == 0) {
    throw opt.Fail("", "PlanZero plans kinds zero1, zero2 and zero3, not \"" + spec.kind + "\"");
  }
  const bool hybrid = opt.Choice("shard_group") == "server";
  double bucket_cap = 0;
  std::string unit = "layer";
  bool prefetch = true;
  if (stage < 3) {
    bucket_cap = opt.Bytes("bucket_size");
  } else {
    unit = opt.Choice("unit");
    prefetch = opt.Bool("prefetch");
  }
  opt.Finish();

  const TrainingSpec& tr = s.training;
  const int gpus = s.cluster.NumGpus();
  const int micro_batches = MicroBatchesPerReplica(
      tr, gpus, "sharded data parallelism over " + std::to_string(gpus) + " GPUs", opt);
  const ShardGroups groups = MakeShardGroups(s, hybrid, opt, "shard_group");
  const int n = groups.shard_size;

  const Workload w = BuildWorkload(s.model, tr.micro_batch, tr.precision, tr.seed);
  const double e = TrainingBytesPerParam(tr.precision);  // 16-bit weights and gradients
  const DType act = StorageDType(tr.precision);          // of kernels and collectives (BF16 in FP8)
  StateSharding sharding;
  sharding.optimizer = n;
  if (stage >= 2) sharding.gradients = n;
  if (stage >= 3) sharding.weights = n;

  Plan plan;
  plan.graph = TaskGraph(gpus);
  if (s.simulation.max_tasks > 0) plan.graph.SetTaskLimit(s.simulation.max_tasks);
  plan.samples_per_iteration = static_cast<double>(tr.global_batch);
  plan.tokens_per_sample = w.tokens_per_sample;
  TaskGraph& g = plan.graph;
  const int compute = g.Stream("compute");
  const int comm = g.Stream("comm");
  const int comm_rs = stage == 3 ? g.Stream("comm_rs") : comm;
  const int layers = static_cast<int>(w.layers.size());

  // Folding (strategies/fold.h): every GPU is a data-parallel replica; the first server(s)
  // compute, the others keep their members of the collectives that span blocks as mirrors,
  // and a shard group inside a folded block (shard_group: server) is left out with it.
  const FoldDecision folding = DecideFold(s, ReplicaLayout{gpus, 1, 1});
  const int block = folding.fold ? folding.block_gpus : gpus;
  plan.fold = DescribeFold(folding, gpus);
  // Set before any task, so that figures measured as tasks retire know it (docs/scale.md).
  if (folding.fold) g.SetFold(FoldRepresentatives(gpus, block));
  const FoldedCollectives folded(g, gpus, block, act);

  // zero1/2: the tasks each rank's first compute of an iteration waits for, the previous
  // iteration's parameter all-gathers (zero3's lowering, fsdp_units.h, keeps its own).
  std::vector<std::vector<TaskId>> ready(gpus);

  double moved_per_iteration = 0;  // bytes per rank, for the notes
  const double ring = n > 1 ? static_cast<double>(n - 1) / n : 0;
  const int iterations = tr.warmup_iterations + tr.measured_iterations;

  if (stage < 3) {
    const std::vector<GradientBucket> buckets = MakeGradientBuckets(w.layers, e, bucket_cap);
    for (int it = 0; it < iterations; ++it) {
      // grads_ready[mb][r][layer]
      std::vector<std::vector<std::vector<TaskId>>> grads_ready(
          micro_batches, std::vector<std::vector<TaskId>>(gpus, std::vector<TaskId>(layers, -1)));
      for (int r = 0; r < block; ++r) {
        TaskPlace at{r, compute, it, ""};
        if (it == 0) AddModelStates(g, at, w.params, tr.precision, sharding);
        TaskId last = -1;
        for (int mb = 0; mb < micro_batches; ++mb) {
          at.prefix = ShardedTaskName(it, mb, "");
          for (int i = 0; i < layers; ++i) {
            const TaskId first = g.next_id();
            last = AddForward(g, w.layers[i], act, at, last);
            if (mb == 0 && i == 0) {
              for (TaskId d : ready[r]) g.AddDep(first, d);
            }
          }
          for (int i = layers - 1; i >= 0; --i) {
            last = AddBackward(g, w.layers[i], act, at, last);
            grads_ready[mb][r][i] = last;
          }
        }
      }
      // Reduce-scatter per bucket: zero2 every micro-batch, zero1 after the last one.
      std::vector<std::vector<TaskId>> reduced;  // per bucket, each rank's last reduction
      for (int mb = stage == 2 ? 0 : micro_batches - 1; mb < micro_batches; ++mb) {
        reduced.clear();
        for (size_t k = 0; k < buckets.size(); ++k) {
          std::vector<TaskId> deps(gpus);
          for (int r = 0; r < gpus; ++r) deps[r] = grads_ready[mb][r][buckets[k].ready_after_layer];
          reduced.push_back(folded.Add(
              groups.shard, CollectiveKind::kReduceScatter, buckets[k].params * e, comm, it,
              ShardedTaskName(it, mb, "reduce_scatter/bucket" + std::to_string(k)), deps));
          moved_per_iteration += ring * buckets[k].params * e;
        }
      }
      if (!groups.replica.empty()) {
        for (size_t k = 0; k < buckets.size(); ++k) {
          reduced[k] = folded.Add(
              groups.replica, CollectiveKind::kAllReduce, buckets[k].params * e / n, comm, it,
              ShardedTaskName(it, -1, "replica_allreduce/bucket" + std::to_string(k)), reduced[k]);
        }
      }
      // Adam on the shard, then all-gather of the updated 16-bit weights per bucket.
      std::vector<TaskId> step(gpus, -1);
      for (int r = 0; r < block; ++r) {
        Task t = AdamStepTask(w.params / n, tr.precision);
        t.rank = r;
        t.stream = compute;
        t.iteration = it;
        t.name = ShardedTaskName(it, -1, "adam");
        for (const auto& members : reduced) t.deps.push_back(members[r]);
        step[r] = g.Add(std::move(t));
        ready[r].clear();
      }
      for (size_t k = 0; k < buckets.size(); ++k) {
        const std::vector<TaskId> ag =
            folded.Add(groups.shard, CollectiveKind::kAllGather, buckets[k].params * e, comm, it,
                       ShardedTaskName(it, -1, "all_gather/bucket" + std::to_string(k)), step);
        for (int r = 0; r < block; ++r) ready[r].push_back(ag[r]);
        moved_per_iteration += ring * buckets[k].params * e;
      }
    }
    plan.notes.push_back(std::to_string(buckets.size()) + " gradient bucket(s) of up to " +
                         FormatBytes(bucket_cap) + ", reduce-scattered " +
                         (stage == 2 ? "every micro-batch" : "after the last micro-batch") +
                         " and all-gathered after the step");
  } else {
    FsdpUnits units;
    units.units = FsdpUnitLayers(layers, unit == "layer");
    FsdpFragment all;
    all.shard = groups.shard;
    all.replica = groups.replica;
    all.shard_size = n;
    all.unit_fraction.assign(units.units.size(), 1.0);
    all.gather_stream = comm;
    all.scatter_stream = comm_rs;
    units.fragments = {all};
    units.prefetch = prefetch;
    units.compute_stream = compute;
    units.micro_batches = micro_batches;
    units.iterations = iterations;
    units.state_params = w.params;
    units.sharding = sharding;
    units.step_params = w.params / n;
    moved_per_iteration = LowerFsdpUnits(g, w, tr.precision, act, e, units, folded);
    plan.notes.push_back(std::to_string(units.units.size()) + " FSDP unit(s) (" + unit +
                         "), weights all-gathered before each forward and backward" +
                         (prefetch ? " with one-unit prefetch" : " without prefetch") +
                         ", gradients reduce-scattered after each unit's backward");
  }

  char buf[200];
  std::snprintf(buf, sizeof buf,
                "%s over %d GPUs%s: %d micro-batch(es) of %d per GPU, %.3g M "
                "parameters",
                spec.kind.c_str(), n, hybrid ? " per server, replicated across servers" : "",
                micro_batches, tr.micro_batch, w.params / 1e6);
  plan.notes.push_back(buf);
  const ModelStateBytes states = AdamStateBytes(w.params, tr.precision, sharding);
  plan.notes.push_back("memory per GPU: model states " + FormatBytes(states.Total()) +
                       ", activations " + FormatBytes(PeakActivationBytes(w, 1)) + "; " +
                       FormatBytes(moved_per_iteration / iterations) +
                       " moved per rank per iteration in the shard group");
  return plan;
}

}  // namespace stratasim
