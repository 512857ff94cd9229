#include "strategies/sharded/zero.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/units.h"
#include "models/memory.h"
#include "models/workload.h"
#include "strategies/batching.h"
#include "strategies/fold.h"
#include "strategies/gradient_buckets.h"
#include "strategies/layer_tasks.h"

namespace stratasim {
namespace {

// The groups: each rank shards its states over shard[shard_of[r]]; with hybrid sharding it
// all-reduces its shard with the ranks of replica[replica_of[r]] (one per server).
struct Groups {
  std::vector<std::vector<int>> shard, replica;
  std::vector<int> shard_of, replica_of;
  int shard_size = 1;
};

Groups MakeGroups(const Scenario& s, bool per_server, const OptionReader& opt) {
  const int gpus = s.cluster.NumGpus();
  Groups g;
  g.shard_of.assign(gpus, 0);
  g.replica_of.assign(gpus, -1);
  if (!per_server) {
    g.shard.emplace_back();
    for (int r = 0; r < gpus; ++r) g.shard[0].push_back(r);
    g.shard_size = gpus;
    return g;
  }
  std::map<int, std::vector<int>> by_server;
  for (int r = 0; r < gpus; ++r) by_server[s.cluster.Locate(r).server].push_back(r);
  for (auto& [server, ranks] : by_server) {
    if (ranks.size() != by_server.begin()->second.size()) {
      throw opt.Fail("shard_group", "hybrid sharding needs servers with equal GPU counts (server " +
                                        std::to_string(server) + " has " +
                                        std::to_string(ranks.size()) + ", server " +
                                        std::to_string(by_server.begin()->first) + " has " +
                                        std::to_string(by_server.begin()->second.size()) + ")");
    }
    for (int r : ranks) g.shard_of[r] = static_cast<int>(g.shard.size());
    g.shard.push_back(ranks);
  }
  g.shard_size = static_cast<int>(g.shard[0].size());
  if (g.shard.size() > 1) {
    for (int j = 0; j < g.shard_size; ++j) {
      std::vector<int> rep;
      for (const auto& sh : g.shard) {
        g.replica_of[sh[j]] = static_cast<int>(g.replica.size());
        rep.push_back(sh[j]);
      }
      g.replica.push_back(rep);
    }
  }
  return g;
}

std::string TaskNameOf(int it, int mb, const std::string& what) {
  return "it" + std::to_string(it) + (mb >= 0 ? "/mb" + std::to_string(mb) : "") + "/" + what;
}

}  // namespace

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
  const Groups groups = MakeGroups(s, hybrid, opt);
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
  const std::vector<TaskId> none(gpus, -1);

  // Folding (strategies/fold.h): every GPU is a data-parallel replica; the first server(s)
  // compute, the others keep their members of the collectives that span blocks as mirrors,
  // and a shard group inside a folded block (shard_group: server) is left out with it.
  const FoldDecision folding = DecideFold(s, ReplicaLayout{gpus, 1, 1});
  const int block = folding.fold ? folding.block_gpus : gpus;
  plan.fold = DescribeFold(folding, gpus);
  // Set before any task, so that figures measured as tasks retire know it (docs/scale.md).
  if (folding.fold) g.SetFold(FoldRepresentatives(gpus, block));
  auto collectives = [&](const std::vector<std::vector<int>>& of, CollectiveKind kind, double bytes,
                         int stream, int it, const Name& name, const std::vector<TaskId>& deps) {
    std::vector<std::vector<int>> kept;
    for (const std::vector<int>& group : of) {
      if (*std::min_element(group.begin(), group.end()) < block) kept.push_back(group);
    }
    const std::vector<TaskId> member_of =
        AddGroupCollectives(g, kept, kind, bytes, act, stream, it, name, deps);
    for (int r = block; r < gpus; ++r) {
      if (member_of[r] >= 0) g.SetMirror(member_of[r], member_of[r % block]);
    }
    return member_of;
  };

  // The tasks each rank's first compute of an iteration waits for: the previous iteration's
  // parameter all-gathers (zero1/2) or its optimizer step (zero3).
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
          at.prefix = TaskNameOf(it, mb, "");
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
          reduced.push_back(collectives(
              groups.shard, CollectiveKind::kReduceScatter, buckets[k].params * e, comm, it,
              TaskNameOf(it, mb, "reduce_scatter/bucket" + std::to_string(k)), deps));
          moved_per_iteration += ring * buckets[k].params * e;
        }
      }
      if (!groups.replica.empty()) {
        for (size_t k = 0; k < buckets.size(); ++k) {
          reduced[k] = collectives(
              groups.replica, CollectiveKind::kAllReduce, buckets[k].params * e / n, comm, it,
              TaskNameOf(it, -1, "replica_allreduce/bucket" + std::to_string(k)), reduced[k]);
        }
      }
      // Adam on the shard, then all-gather of the updated 16-bit weights per bucket.
      std::vector<TaskId> step(gpus, -1);
      for (int r = 0; r < block; ++r) {
        Task t = AdamStepTask(w.params / n, tr.precision);
        t.rank = r;
        t.stream = compute;
        t.iteration = it;
        t.name = TaskNameOf(it, -1, "adam");
        for (const auto& members : reduced) t.deps.push_back(members[r]);
        step[r] = g.Add(std::move(t));
        ready[r].clear();
      }
      for (size_t k = 0; k < buckets.size(); ++k) {
        const std::vector<TaskId> ag =
            collectives(groups.shard, CollectiveKind::kAllGather, buckets[k].params * e, comm, it,
                        TaskNameOf(it, -1, "all_gather/bucket" + std::to_string(k)), step);
        for (int r = 0; r < block; ++r) ready[r].push_back(ag[r]);
        moved_per_iteration += ring * buckets[k].params * e;
      }
    }
    plan.notes.push_back(std::to_string(buckets.size()) + " gradient bucket(s) of up to " +
                         FormatBytes(bucket_cap) + ", reduce-scattered " +
                         (stage == 2 ? "every micro-batch" : "after the last micro-batch") +
                         " and all-gathered after the step");
  } else {
    // FSDP units: groups of consecutive layers whose weights are gathered together.
    std::vector<std::vector<int>> units;
    for (int i = 0; i < layers; ++i) {
      if (unit == "layer" || units.empty()) units.emplace_back();
      units.back().push_back(i);
    }
    const int num_units = static_cast<int>(units.size());
    std::vector<double> unit_params(num_units, 0);
    for (int u = 0; u < num_units; ++u) {
      for (int i : units[u]) unit_params[u] += w.layers[i].params;
    }
    for (int it = 0; it < iterations; ++it) {
      // The passes of the iteration in compute order: per micro-batch, every unit's forward,
      // then every unit's backward in reverse. Each needs its unit's weights gathered.
      struct Pass {
        int mb, unit;
        bool backward;
      };
      std::vector<Pass> passes;
      for (int mb = 0; mb < micro_batches; ++mb) {
        for (int u = 0; u < num_units; ++u) passes.push_back({mb, u, false});
        for (int u = num_units - 1; u >= 0; --u) passes.push_back({mb, u, true});
      }
      std::vector<std::vector<TaskId>> pass_end(passes.size(), none);
      std::vector<TaskId> last(gpus, -1);
      std::vector<std::vector<TaskId>> reduced(num_units, none);  // last micro-batch's
      if (it == 0) {
        for (int r = 0; r < block; ++r) {
          AddModelStates(g, TaskPlace{r, compute, it, ""}, w.params, tr.precision, sharding);
        }
      }
      for (size_t p = 0; p < passes.size(); ++p) {
        const Pass& pass = passes[p];
        const std::string what = w.layers[units[pass.unit].front()].name +
                                 (units[pass.unit].size() > 1 ? "+" : "") +
                                 (pass.backward ? "/bwd" : "/fwd");
        const double full = unit_params[pass.unit] * e;
        std::vector<TaskId> gathered = none;
        if (full > 0) {
          // Issued after the pass two back (prefetch: while the previous pass computes) or
          // after the previous pass; the first passes wait for the previous step.
          const size_t back = prefetch ? 2 : 1;
          std::vector<TaskId> deps(gpus, -1);
          for (int r = 0; r < block; ++r) {
            deps[r] =
                p >= back ? pass_end[p - back][r] : (ready[r].empty() ? -1 : ready[r].front());
            const TaskId alloc = AddMemory(g, TaskPlace{r, comm, it, TaskNameOf(it, pass.mb, "")},
                                           what + "/gather", "gathered_weights", full);
            if (deps[r] >= 0) g.AddDep(alloc, deps[r]);
          }
          gathered = collectives(groups.shard, CollectiveKind::kAllGather, full, comm, it,
                                 TaskNameOf(it, pass.mb, what + "/all_gather"), deps);
          moved_per_iteration += ring * full;
        }
        for (int r = 0; r < block; ++r) {
          const TaskPlace at{r, compute, it, TaskNameOf(it, pass.mb, "")};
          const TaskId first = g.next_id();
          if (pass.backward) {
            // The unit's full gradient lives until its reduce-scatter ends.
            AddMemory(g, at, what + "/unit_gradients", "gradients", full);
            for (auto i = units[pass.unit].rbegin(); i != units[pass.unit].rend(); ++i) {
              last[r] = AddBackward(g, w.layers[*i], act, at, last[r]);
            }
          } else {
            for (int i : units[pass.unit]) {
              last[r] = AddForward(g, w.layers[i], act, at, last[r]);
            }
          }
          if (gathered[r] >= 0) g.AddDep(first, gathered[r]);
          if (p == 0 && !ready[r].empty()) g.AddDep(first, ready[r].front());
          if (full > 0) AddMemory(g, at, what + "/gather", "gathered_weights", -full);
          pass_end[p][r] = last[r];
        }
        if (pass.backward && full > 0) {
          const std::vector<TaskId> rs =
              collectives(groups.shard, CollectiveKind::kReduceScatter, full, comm_rs, it,
                          TaskNameOf(it, pass.mb, what + "/reduce_scatter"), pass_end[p]);
          moved_per_iteration += ring * full;
          for (int r = 0; r < block; ++r) {
            AddMemory(g, TaskPlace{r, comm_rs, it, TaskNameOf(it, pass.mb, "")},
                      what + "/unit_gradients", "gradients", -full);
          }
          if (pass.mb == micro_batches - 1) reduced[pass.unit] = rs;
        }
      }
      if (!groups.replica.empty()) {
        for (int u = 0; u < num_units; ++u) {
          if (unit_params[u] <= 0) continue;
          reduced[u] = collectives(
              groups.replica, CollectiveKind::kAllReduce, unit_params[u] * e / n, comm_rs, it,
              TaskNameOf(it, -1, w.layers[units[u].front()].name + "/replica_allreduce"),
              reduced[u]);
        }
      }
      for (int r = 0; r < block; ++r) {
        Task t = AdamStepTask(w.params / n, tr.precision);
        t.rank = r;
        t.stream = compute;
        t.iteration = it;
        t.name = TaskNameOf(it, -1, "adam");
        for (const auto& members : reduced) {
          if (members[r] >= 0) t.deps.push_back(members[r]);
        }
        ready[r] = {g.Add(std::move(t))};
      }
    }
    plan.notes.push_back(std::to_string(num_units) + " FSDP unit(s) (" + unit +
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
