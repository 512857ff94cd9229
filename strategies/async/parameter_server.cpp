// A sharded parameter server (Li et al., "Scaling Distributed Machine Learning with the
// Parameter Server", OSDI 2014), bulk-synchronous or stale-synchronous (Ho et al., NIPS 2013).
//
// Per iteration each worker runs its forward and backward passes, pushes each shard its slice
// of the gradients (a Send/Recv of real bytes), and pulls the shard's updated parameters back;
// the shard runs the optimizer on its slice. The staleness bound s is static dependencies: a
// shard answers worker w's pull of iteration t only once it has applied w's own push of t and
// every worker's push of t - s, and w starts iteration t + 1 only after its pulls of t. So w
// starts iteration t only when every worker's push of t - s - 1 is applied: no worker is more
// than s iterations ahead of the slowest (SSP's bounded staleness); s = 0 is BSP, where the
// shard sums all pushes of t and runs one optimizer step, as ps-lite's synchronous mode does.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/units.h"
#include "models/memory.h"
#include "models/workload.h"
#include "strategies/async/async.h"
#include "strategies/async/worker_passes.h"
#include "strategies/batching.h"
#include "strategies/layer_tasks.h"

namespace stratasim {
namespace {

OptionSpecs PsCommonOptions() {
  return {
      Integer("servers", 1, 4096,
              "parameter-server shards; the gradients and parameters are split evenly over them")
          .Derived("one per server of the cluster"),
      OneOf("server_device", {"gpu", "cpu"},
            "gpu: shards on GPUs (see placement); cpu: shard k on a CPU socket of server "
            "k mod servers (sockets in turn), reached over that server's PCIe tree and NIC, "
            "its updates memory-bound at the socket's DDR bandwidth; every GPU trains")
          .Default("gpu"),
      OneOf("placement", {"colocated", "dedicated"},
            "GPU shards only. colocated: shard k on GPU k x GPUs / servers, sharing it with "
            "that worker; dedicated: shards on the last GPUs, which do not train")
          .Default("colocated"),
  };
}

// Where the workers and shards run.
struct PsLayout {
  int workers = 0;
  std::vector<int> worker_rank;  // [w]
  std::vector<int> shard_rank;   // [k]
  bool on_host = false;          // shards on the host CPU socket of shard_rank[k]
};

// CPU shards: shard k on server k mod S, on its sockets in turn; the rank of the first GPU
// under that socket names it (Task::on_host).
PsLayout HostLayout(const ClusterSpec& c, int servers) {
  PsLayout l;
  l.on_host = true;
  l.workers = c.NumGpus();
  for (int w = 0; w < l.workers; ++w) l.worker_rank.push_back(w);
  std::vector<int> first_rank(c.NumServers(), -1);
  for (int r = c.NumGpus() - 1; r >= 0; --r) first_rank[c.Locate(r).server] = r;
  for (int k = 0; k < servers; ++k) {
    const int server = k % c.NumServers();
    const GpuLocation at = c.Locate(first_rank[server]);
    const ServerGroup& g = c.groups[at.group];
    const int sockets = g.pcie ? g.pcie->sockets : 1;
    const int socket = (k / c.NumServers()) % sockets;
    l.shard_rank.push_back(first_rank[server] + socket * (g.gpus_per_server / sockets));
  }
  return l;
}

PsLayout Layout(int gpus, int servers, bool dedicated, const OptionReader& opt) {
  if (dedicated && servers >= gpus) {
    throw opt.Fail("servers", "dedicated shards leave no GPU to train: " + std::to_string(servers) +
                                  " shard(s) on " + std::to_string(gpus) + " GPUs");
  }
  if (!dedicated && servers > gpus) {
    throw opt.Fail("servers", "more colocated shards than GPUs (" + std::to_string(gpus) + ")");
  }
  PsLayout l;
  l.workers = dedicated ? gpus - servers : gpus;
  for (int w = 0; w < l.workers; ++w) l.worker_rank.push_back(w);
  for (int k = 0; k < servers; ++k) {
    l.shard_rank.push_back(
        dedicated ? l.workers + k : static_cast<int>(static_cast<long long>(k) * gpus / servers));
  }
  return l;
}

Task Comm(int stream, int iteration, const std::string& name, std::vector<TaskId> deps) {
  Task t;
  t.stream = stream;
  t.iteration = iteration;
  t.phase = Phase::kCommunication;
  t.category = "ps";
  t.name = name;
  t.deps = std::move(deps);
  return t;
}

}  // namespace

const OptionSpecs& ParameterServerOptions() {
  static const OptionSpecs options = PsCommonOptions();
  return options;
}

const OptionSpecs& SspOptions() {
  static const OptionSpecs options =
      Join(PsCommonOptions(),
           {Integer("staleness", 1, 1000,
                    "the bound s of stale-synchronous parallel (Ho et al. 2013): a worker may "
                    "start iteration t once every worker's push of t - s - 1 is applied")
                .Default("1")});
  return options;
}

Plan PlanParameterServer(const Scenario& s, const StrategySpec& spec) {
  const bool ssp = spec.kind == "ssp";
  OptionReader opt(spec, ssp ? SspOptions() : ParameterServerOptions());
  const int gpus = s.cluster.NumGpus();
  const int servers = opt.Int("servers", s.cluster.NumServers());
  const bool on_cpu = opt.Choice("server_device") == "cpu";
  const bool dedicated = opt.Choice("placement") == "dedicated";
  const int staleness = ssp ? opt.Int("staleness") : 0;
  opt.Finish();
  if (on_cpu && opt.Given("placement")) {
    throw opt.Fail("placement", "places GPU shards; with server_device: cpu every GPU trains");
  }
  const PsLayout l =
      on_cpu ? HostLayout(s.cluster, servers) : Layout(gpus, servers, dedicated, opt);

  const TrainingSpec& tr = s.training;
  const int micro_batches = MicroBatchesPerReplica(
      tr, l.workers,
      "parameter-server data parallelism over " + std::to_string(l.workers) + " workers", opt);
  const Workload w = BuildWorkload(s.model, tr.micro_batch, tr.precision, tr.seed);
  const DType act = StorageDType(tr.precision);
  const double e = TrainingBytesPerParam(tr.precision);
  const double slice_params = w.params / servers;
  // Pushes carry gradients and pulls the training copy of the weights, both in the training
  // precision; the shard keeps the FP32 master weights and Adam's moments of its slice.
  const double push_bytes = slice_params * e, pull_bytes = slice_params * e;

  Plan plan;
  plan.graph = TaskGraph(gpus);
  if (s.simulation.max_tasks > 0) plan.graph.SetTaskLimit(s.simulation.max_tasks);
  plan.samples_per_iteration = static_cast<double>(tr.global_batch);
  plan.tokens_per_sample = w.tokens_per_sample;
  TaskGraph& g = plan.graph;
  const int compute = g.Stream("compute");
  std::vector<int> to_shard(servers), from_worker(l.workers);
  // Worker side: one stream per shard, so that pushes to all shards go at once (as ps-lite's
  // van sends to every server); shard side: one per worker, so that one slow worker's update
  // does not hold the others'.
  for (int k = 0; k < servers; ++k) to_shard[k] = g.Stream("ps_shard" + std::to_string(k));
  for (int v = 0; v < l.workers; ++v) from_worker[v] = g.Stream("ps_worker" + std::to_string(v));
  const int update = g.Stream("ps_update");

  const ModelStateBytes states = AdamStateBytes(w.params, tr.precision);
  const ModelStateBytes shard_states = AdamStateBytes(slice_params, tr.precision);
  std::vector<char> is_worker(gpus, 0);
  for (int r : l.worker_rank) is_worker[r] = 1;
  std::vector<int> shards_on(gpus, 0);
  for (int r : l.shard_rank) ++shards_on[r];

  const int iterations = tr.warmup_iterations + tr.measured_iterations;
  // apply[t][k][v]: the task after which shard k has applied worker v's push of iteration t.
  std::vector<std::vector<std::vector<TaskId>>> apply(
      iterations, std::vector<std::vector<TaskId>>(servers, std::vector<TaskId>(l.workers, -1)));
  std::vector<std::vector<TaskId>> pulled(l.workers);  // what worker v's next iteration waits for
  for (int t = 0; t < iterations; ++t) {
    const std::string it = "it" + std::to_string(t) + "/";
    if (t == 0) {
      for (int r = 0; r < gpus; ++r) {
        const TaskPlace at{r, compute, 0, ""};
        if (is_worker[r]) {
          AddMemory(g, at, "weights", "weights", states.weights);
          AddMemory(g, at, "gradients", "gradients", states.gradients);
        }
        if (shards_on[r] > 0 && !l.on_host) {
          AddMemory(g, at, "ps_optimizer", "optimizer", shards_on[r] * shard_states.optimizer);
          // A receive buffer per worker: under SSP every worker's push may be in flight.
          AddMemory(g, at, "ps_push_buffers", "comm_buffers",
                    shards_on[r] * l.workers * push_bytes);
        }
      }
    }
    std::vector<TaskId> grads(l.workers);
    for (int v = 0; v < l.workers; ++v) {
      grads[v] = AddWorkerPasses(g, w, act, TaskPlace{l.worker_rank[v], compute, t, ""},
                                 micro_batches, pulled[v]);
      pulled[v].clear();
    }
    // push[k][v]: the task after which shard k holds worker v's gradients of t.
    std::vector<std::vector<TaskId>> push(servers, std::vector<TaskId>(l.workers));
    for (int k = 0; k < servers; ++k) {
      for (int v = 0; v < l.workers; ++v) {
        if (!l.on_host && l.shard_rank[k] == l.worker_rank[v]) {
          push[k][v] = grads[v];  // its own GPU: nothing moves
          continue;
        }
        Task recv = Comm(from_worker[v], t, it + "push/worker" + std::to_string(v), {});
        recv.on_host = l.on_host;
        push[k][v] =
            g.AddTransfer(l.worker_rank[v], l.shard_rank[k], push_bytes,
                          Comm(to_shard[k], t, it + "push/shard" + std::to_string(k), {grads[v]}),
                          std::move(recv))
                .second;
      }
    }
    for (int k = 0; k < servers; ++k) {
      const int r = l.shard_rank[k];
      const std::string shard = it + "shard" + std::to_string(k) + "/";
      if (staleness == 0) {
        // BSP: sum the workers' slices (read each, write the sum), then one optimizer step.
        Task sum = ElementwiseTask(TaskPlace{r, update, t, shard}, "sum_pushes", Phase::kOptimizer,
                                   (l.workers - 1) * slice_params, (l.workers + 1) * push_bytes);
        sum.deps = push[k];
        sum.on_host = l.on_host;
        g.Add(std::move(sum));
        Task step = AdamStepTask(slice_params, tr.precision);
        step.rank = r;
        step.stream = update;
        step.iteration = t;
        step.name = shard + "adam";
        step.on_host = l.on_host;
        const TaskId id = g.Add(std::move(step));
        std::fill(apply[t][k].begin(), apply[t][k].end(), id);
        continue;
      }
      // SSP: each worker's update is applied as it arrives, on that worker's stream.
      for (int v = 0; v < l.workers; ++v) {
        Task step = AdamStepTask(slice_params, tr.precision);
        step.rank = r;
        step.stream = from_worker[v];
        step.iteration = t;
        step.name = shard + "adam/worker" + std::to_string(v);
        step.deps = {push[k][v]};
        step.on_host = l.on_host;
        apply[t][k][v] = g.Add(std::move(step));
      }
    }
    for (int k = 0; k < servers; ++k) {
      for (int v = 0; v < l.workers; ++v) {
        std::vector<TaskId> deps = {apply[t][k][v]};
        if (t - staleness >= 0) {
          for (TaskId a : apply[t - staleness][k]) {
            if (std::find(deps.begin(), deps.end(), a) == deps.end()) deps.push_back(a);
          }
        }
        if (!l.on_host && l.shard_rank[k] == l.worker_rank[v]) {
          pulled[v].insert(pulled[v].end(), deps.begin(), deps.end());
          continue;
        }
        Task send = Comm(from_worker[v], t, it + "pull/worker" + std::to_string(v), deps);
        send.on_host = l.on_host;
        pulled[v].push_back(
            g.AddTransfer(l.shard_rank[k], l.worker_rank[v], pull_bytes, std::move(send),
                          Comm(to_shard[k], t, it + "pull/shard" + std::to_string(k), {}))
                .second);
      }
    }
  }

  std::string ranks;
  for (int r : l.shard_rank) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  const std::string where =
      l.on_host ? "on the host CPU sockets of GPU rank(s) " + ranks +
                      " (updates at the socket's memory bandwidth, optimizer states in host "
                      "memory)"
                : "on GPU rank(s) " + ranks + " (" +
                      (dedicated ? "dedicated" : "colocated with workers") + ")";
  plan.notes.push_back(std::to_string(servers) + " parameter-server shard(s) " + where + ", " +
                       std::to_string(l.workers) + " worker(s), " + std::to_string(micro_batches) +
                       " micro-batch(es) of " + std::to_string(tr.micro_batch) +
                       " per worker per iteration");
  plan.notes.push_back("per worker per shard per iteration: push " + FormatBytes(push_bytes) +
                       " of gradients, pull " + FormatBytes(pull_bytes) + " of parameters");
  plan.notes.push_back(
      staleness == 0
          ? std::string("bulk-synchronous (staleness 0): each shard sums all pushes of an "
                        "iteration, then runs one Adam step; every pull waits for it")
          : "stale-synchronous, staleness " + std::to_string(staleness) +
                ": shards apply each push as it arrives; a worker starts iteration t once "
                "every worker's push of t - " +
                std::to_string(staleness + 1) +
                " is applied (iterations ahead and waiting "
                "are measured from the trace: strategies/async/staleness.h)");
  char params[64];
  std::snprintf(params, sizeof params, "%.3g M parameters", w.params / 1e6);
  plan.notes.push_back(params);
  plan.notes.push_back("memory: a worker holds weights " + FormatBytes(states.weights) +
                       " and gradients " + FormatBytes(states.gradients) + "; a shard holds " +
                       FormatBytes(shard_states.optimizer) + " of optimizer states and " +
                       FormatBytes(l.workers * push_bytes) + " of push buffers" +
                       (l.on_host ? " in host memory" : ""));
  return plan;
}

}  // namespace stratasim
