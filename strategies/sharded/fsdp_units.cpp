#include "strategies/sharded/fsdp_units.h"

#include "strategies/layer_tasks.h"

namespace stratasim {
namespace {

std::string Suffix(const FsdpFragment& f) { return f.tag.empty() ? "" : "/" + f.tag; }

// Bytes of each fragment of a unit whose full buffer is `full` bytes: the last fragment takes
// what the others leave, so that the fragments add up to the buffer exactly (the memory
// ledger allocates the buffer whole and frees it fragment by fragment).
std::vector<double> FragmentBytes(const FsdpUnits& p, int unit, double full) {
  std::vector<double> bytes(p.fragments.size(), 0);
  double left = full;
  for (size_t f = 0; f + 1 < p.fragments.size(); ++f) {
    bytes[f] = p.fragments[f].unit_fraction[unit] * full;
    left -= bytes[f];
  }
  bytes.back() = left;
  return bytes;
}

}  // namespace

std::vector<std::vector<int>> FsdpUnitLayers(int layers, bool per_layer) {
  std::vector<std::vector<int>> units;
  for (int i = 0; i < layers; ++i) {
    if (per_layer || units.empty()) units.emplace_back();
    units.back().push_back(i);
  }
  return units;
}

double LowerFsdpUnits(TaskGraph& g, const Workload& w, DType precision, DType act, double e,
                      const FsdpUnits& p, const FoldedCollectives& collectives) {
  const int gpus = g.num_ranks();
  const int block = collectives.block();
  const int compute = p.compute_stream;
  const int num_units = static_cast<int>(p.units.size());
  const int frags = static_cast<int>(p.fragments.size());
  const std::vector<TaskId> none(gpus, -1);
  std::vector<double> unit_params(num_units, 0);
  for (int u = 0; u < num_units; ++u) {
    for (int i : p.units[u]) unit_params[u] += w.layers[i].params;
  }
  // The tasks each rank's first compute of an iteration waits for: the previous step.
  std::vector<std::vector<TaskId>> ready(gpus);
  double moved = 0;
  for (int it = 0; it < p.iterations; ++it) {
    // The passes of the iteration in compute order: per micro-batch, every unit's forward,
    // then every unit's backward in reverse. Each needs its unit's weights gathered.
    struct Pass {
      int mb, unit;
      bool backward;
    };
    std::vector<Pass> passes;
    for (int mb = 0; mb < p.micro_batches; ++mb) {
      for (int u = 0; u < num_units; ++u) passes.push_back({mb, u, false});
      for (int u = num_units - 1; u >= 0; --u) passes.push_back({mb, u, true});
    }
    std::vector<std::vector<TaskId>> pass_end(passes.size(), none);
    std::vector<TaskId> last(gpus, -1);
    // [fragment][unit]: each rank's last reduction of the last micro-batch's gradients.
    std::vector<std::vector<std::vector<TaskId>>> reduced(
        frags, std::vector<std::vector<TaskId>>(num_units, none));
    if (it == 0) {
      for (int r = 0; r < block; ++r) {
        AddModelStates(g, TaskPlace{r, compute, it, ""}, p.state_params, precision, p.sharding);
      }
    }
    for (size_t q = 0; q < passes.size(); ++q) {
      const Pass& pass = passes[q];
      const std::vector<int>& layers = p.units[pass.unit];
      const std::string what = w.layers[layers.front()].name + (layers.size() > 1 ? "+" : "") +
                               (pass.backward ? "/bwd" : "/fwd");
      const std::string prefix = ShardedTaskName(it, pass.mb, "");
      const double full = unit_params[pass.unit] * e;
      const std::vector<double> bytes = FragmentBytes(p, pass.unit, full);
      std::vector<std::vector<TaskId>> gathered(frags, none);
      if (full > 0) {
        // Issued after the pass two back (prefetch: while the previous pass computes) or
        // after the previous pass; the first passes wait for the previous step.
        const size_t back = p.prefetch ? 2 : 1;
        std::vector<TaskId> deps(gpus, -1);
        for (int r = 0; r < block; ++r) {
          deps[r] = q >= back ? pass_end[q - back][r] : (ready[r].empty() ? -1 : ready[r].front());
        }
        // Every fragment's all-gather at once, each on its own stream.
        for (int f = 0; f < frags; ++f) {
          const FsdpFragment& frag = p.fragments[f];
          if (bytes[f] <= 0) continue;
          for (int r = 0; r < block; ++r) {
            const TaskId alloc =
                AddMemory(g, TaskPlace{r, frag.gather_stream, it, prefix},
                          what + "/gather" + Suffix(frag), "gathered_weights", bytes[f]);
            if (deps[r] >= 0) g.AddDep(alloc, deps[r]);
          }
          gathered[f] = collectives.Add(
              frag.shard, CollectiveKind::kAllGather, bytes[f], frag.gather_stream, it,
              ShardedTaskName(it, pass.mb, what + "/all_gather" + Suffix(frag)), deps);
          moved += static_cast<double>(frag.shard_size - 1) / frag.shard_size * bytes[f];
        }
      }
      for (int r = 0; r < block; ++r) {
        const TaskPlace at{r, compute, it, prefix};
        const TaskId first = g.next_id();
        if (pass.backward) {
          // The unit's full gradient lives until its reduce-scatters end.
          AddMemory(g, at, what + "/unit_gradients", "gradients", full);
          for (auto i = layers.rbegin(); i != layers.rend(); ++i) {
            last[r] = AddBackward(g, w.layers[*i], act, at, last[r]);
          }
        } else {
          for (int i : layers) last[r] = AddForward(g, w.layers[i], act, at, last[r]);
        }
        for (int f = 0; f < frags; ++f) {
          if (gathered[f][r] >= 0) g.AddDep(first, gathered[f][r]);
        }
        if (q == 0 && !ready[r].empty()) g.AddDep(first, ready[r].front());
        if (full > 0) {
          for (int f = 0; f < frags; ++f) {
            if (bytes[f] <= 0) continue;
            AddMemory(g, at, what + "/gather" + Suffix(p.fragments[f]), "gathered_weights",
                      -bytes[f]);
          }
        }
        pass_end[q][r] = last[r];
      }
      if (!pass.backward || full <= 0) continue;
      for (int f = 0; f < frags; ++f) {
        const FsdpFragment& frag = p.fragments[f];
        if (bytes[f] <= 0) continue;
        const std::vector<TaskId> rs = collectives.Add(
            frag.shard, CollectiveKind::kReduceScatter, bytes[f], frag.scatter_stream, it,
            ShardedTaskName(it, pass.mb, what + "/reduce_scatter" + Suffix(frag)), pass_end[q]);
        moved += static_cast<double>(frag.shard_size - 1) / frag.shard_size * bytes[f];
        for (int r = 0; r < block; ++r) {
          AddMemory(g, TaskPlace{r, frag.scatter_stream, it, prefix},
                    what + "/unit_gradients" + Suffix(frag), "gradients", -bytes[f]);
        }
        if (pass.mb == p.micro_batches - 1) reduced[f][pass.unit] = rs;
      }
    }
    // Each reduced shard summed over the ranks that hold the same shard, once per iteration.
    for (int u = 0; u < num_units; ++u) {
      if (unit_params[u] <= 0) continue;
      const std::vector<double> bytes = FragmentBytes(p, u, unit_params[u] * e);
      for (int f = 0; f < frags; ++f) {
        const FsdpFragment& frag = p.fragments[f];
        if (frag.replica.empty() || bytes[f] <= 0) continue;
        reduced[f][u] = collectives.Add(
            frag.replica, CollectiveKind::kAllReduce, bytes[f] / frag.shard_size,
            frag.scatter_stream, it,
            ShardedTaskName(
                it, -1, w.layers[p.units[u].front()].name + "/replica_allreduce" + Suffix(frag)),
            reduced[f][u]);
      }
    }
    for (int r = 0; r < block; ++r) {
      Task t = AdamStepTask(p.step_params, precision);
      t.rank = r;
      t.stream = compute;
      t.iteration = it;
      t.name = ShardedTaskName(it, -1, "adam");
      for (int u = 0; u < num_units; ++u) {
        for (int f = 0; f < frags; ++f) {
          if (reduced[f][u][r] >= 0) t.deps.push_back(reduced[f][u][r]);
        }
      }
      ready[r] = {g.Add(std::move(t))};
    }
  }
  return moved;
}

}  // namespace stratasim
