#include "strategies/sharded/hsdp.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/units.h"
#include "models/memory.h"
#include "models/workload.h"
#include "strategies/batching.h"
#include "strategies/fold.h"
#include "strategies/layer_tasks.h"
#include "strategies/planners/profile.h"
#include "strategies/sharded/fsdp_units.h"
#include "strategies/sharded/hsdp_planner.h"
#include "strategies/sharded/shard_groups.h"

namespace stratasim {
namespace {

// `split` as a fraction in [0, 1]; -1 for "auto".
double ReadSplit(const OptionReader& opt, const std::string& text) {
  if (text == "auto") return -1;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
    throw opt.Fail("split", "expected auto or a fraction in [0, 1] (e.g. 0.75)");
  }
  if (v < 0 || v > 1) throw opt.Fail("split", "the fraction in fragment A must be in [0, 1]");
  return v;
}

// "embedding 0.75, layer0-layer23 0.875, head 0.75": runs of units with one fraction.
std::string SplitText(const Workload& w, const std::vector<std::vector<int>>& units,
                      const std::vector<double>& alpha) {
  std::string out;
  for (size_t u = 0; u < units.size();) {
    size_t v = u;
    while (v + 1 < units.size() && alpha[v + 1] == alpha[u]) ++v;
    char a[32];
    std::snprintf(a, sizeof a, "%.4g", alpha[u]);
    out += (out.empty() ? "" : ", ") + w.layers[units[u].front()].name +
           (v > u ? "-" + w.layers[units[v].front()].name : "") + " " + a;
    u = v + 1;
  }
  return out;
}

}  // namespace

const OptionSpecs& HsdpOptions() {
  static const OptionSpecs o = {
      FreeText("split",
               "auto: the planner chooses each unit's fraction alpha in fragment A (sharded over "
               "the GPUs of a server, collectives inside it) with the MILP solver, minimising "
               "the predicted communication under the memory limit; a number in [0, 1]: that "
               "alpha for every unit, 1 - alpha in fragment B (sharded over the servers, "
               "collectives on the NICs)")
          .Default("auto"),
      Integer("split_levels", 1, 64,
              "split: auto only: the fractions the planner chooses from, multiples of "
              "1/split_levels (20: 0, 0.05, ..., 1); more levels balance the links finer and "
              "make the MILP larger (on DGX A100 the balance is near 0.9, between 1/8's "
              "0.875 and 1)")
          .Default("20"),
      Number("memory_fraction", 0.01, 1,
             "split: auto only: the share of each GPU's memory the planner's estimate may fill; "
             "0.95 as Oases' planner (lucasleesw/oases), the rest for the CUDA context, NCCL "
             "buffers and allocator slack")
          .Default("0.95"),
      Flag("prefetch",
           "issue unit i+1's all-gathers when unit i's compute starts (FSDP's one-unit "
           "prefetch); false: when it ends, so every all-gather is exposed")
          .Default("true"),
  };
  return o;
}

Plan PlanHsdp(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, HsdpOptions());
  const std::string split_text = opt.Text("split");
  const double fixed_alpha = ReadSplit(opt, split_text);
  const bool automatic = fixed_alpha < 0;
  for (const char* key : {"split_levels", "memory_fraction"}) {
    if (!automatic && opt.Given(key)) {
      throw opt.Fail(key, "applies to split: auto only (split is " + split_text + ")");
    }
  }
  const int levels = opt.Int("split_levels");
  const double memory_fraction = opt.Double("memory_fraction");
  const bool prefetch = opt.Bool("prefetch");
  opt.Finish();

  const TrainingSpec& tr = s.training;
  const int gpus = s.cluster.NumGpus();
  if (s.cluster.NumServers() < 2) {
    throw opt.Fail("",
                   "hsdp shards fragment B over the servers and needs at least 2 (the "
                   "cluster has " +
                       std::to_string(s.cluster.NumServers()) + "); on one server it is zero3");
  }
  const ShardGroups groups = MakeShardGroups(s, true, opt, "");
  const int per_server = groups.shard_size;
  const int servers = static_cast<int>(groups.shard.size());
  if (per_server < 2) {
    throw opt.Fail("",
                   "hsdp shards fragment A over the GPUs of a server and needs at least 2 "
                   "per server (the cluster has 1); with one GPU per server it is zero3");
  }
  const int micro_batches = MicroBatchesPerReplica(
      tr, gpus, "sharded data parallelism over " + std::to_string(gpus) + " GPUs", opt);

  const Workload w = BuildWorkload(s.model, tr.micro_batch, tr.precision, tr.seed);
  const double e = TrainingBytesPerParam(tr.precision);  // 16-bit weights and gradients
  const DType act = StorageDType(tr.precision);
  const int layers = static_cast<int>(w.layers.size());

  FsdpUnits p;
  p.units = FsdpUnitLayers(layers, true);
  const int num_units = static_cast<int>(p.units.size());
  std::vector<double> unit_params(num_units, 0);
  double largest = 0;
  for (int u = 0; u < num_units; ++u) {
    for (int i : p.units[u]) unit_params[u] += w.layers[i].params;
    largest = std::max(largest, unit_params[u]);
  }

  Plan plan;
  std::vector<double> alpha(num_units, fixed_alpha);
  if (automatic) {
    HsdpCostInput in;
    in.cluster = planners::ViewCluster(s, planners::CostProfile{});
    in.intra = groups.shard;
    in.inter = groups.replica;
    in.unit_params = unit_params;
    in.gathered_bytes_per_param = e;
    in.state_bytes_per_param = AdamStateBytesPerParam(tr.precision);
    in.micro_batches = micro_batches;
    in.levels = levels;
    // What no split changes: the gathered weights of the unit computing and of the one
    // prefetched, the unit's full gradient until its reduce-scatters end, and one
    // micro-batch's activations (as the simulated ledger holds them).
    in.fixed_bytes = ((prefetch ? 2 : 1) + 1) * largest * e + PeakActivationBytes(w, 1);
    double smallest_gpu = 0;
    for (int r = 0; r < gpus; ++r) {
      const double m = s.cluster.GpuOfRank(r).memory_bytes;
      smallest_gpu = r == 0 ? m : std::min(smallest_gpu, m);
    }
    in.limit_bytes = memory_fraction * smallest_gpu;
    const HsdpSplitProblem problem = BuildHsdpSplitProblem(in);
    const HsdpSplit split = SolveHsdpSplit(problem);
    if (!split.feasible) throw opt.Fail("", HsdpNoFeasiblePlanText(problem));
    for (int u = 0; u < num_units; ++u) alpha[u] = problem.fractions[split.choice[u]];
    char buf[300];
    std::snprintf(buf, sizeof buf,
                  "planner (%s, %s, fractions in steps of 1/%d): predicted communication %s per "
                  "iteration, memory estimate %s of %s",
                  split.solver.c_str(), split.proven_optimal ? "optimal" : "time limit reached",
                  levels, FormatSeconds(split.predicted_s).c_str(),
                  FormatBytes(split.memory_bytes).c_str(), FormatBytes(in.limit_bytes).c_str());
    plan.notes.push_back(buf);
    // The console's planner table (report/solver_table.h), beside the simulated time.
    SolverFigures& f = plan.solver.emplace();
    f.planner = "hsdp split";
    f.solver = split.solver;
    f.status = split.proven_optimal ? "optimal" : "feasible (time limit, not proven optimal)";
    f.variables = split.variables;
    f.rows = split.rows;
    f.objective_s = split.predicted_s;
    f.solve_s = split.solve_seconds;
  }

  plan.graph = TaskGraph(gpus);
  if (s.simulation.max_tasks > 0) plan.graph.SetTaskLimit(s.simulation.max_tasks);
  plan.samples_per_iteration = static_cast<double>(tr.global_batch);
  plan.tokens_per_sample = w.tokens_per_sample;
  TaskGraph& g = plan.graph;
  p.compute_stream = g.Stream("compute");

  // Folding (strategies/fold.h) as zero3 with shard_group: server: the first server computes;
  // the rails keep their other members as mirrors; the groups inside folded servers (A's
  // collectives, B's in-server all-reduces) are left out with them.
  const FoldDecision folding = DecideFold(s, ReplicaLayout{gpus, 1, 1});
  const int block = folding.fold ? folding.block_gpus : gpus;
  plan.fold = DescribeFold(folding, gpus);
  if (folding.fold) g.SetFold(FoldRepresentatives(gpus, block));
  const FoldedCollectives folded(g, gpus, block, act);

  FsdpFragment a;
  a.tag = "intra";
  a.shard = groups.shard;      // the GPUs of each server
  a.replica = groups.replica;  // A is replicated across servers: each rail holds one shard
  a.shard_size = per_server;
  a.unit_fraction = alpha;
  a.gather_stream = g.Stream("comm_intra");
  a.scatter_stream = g.Stream("comm_rs_intra");
  FsdpFragment b;
  b.tag = "inter";
  b.shard = groups.replica;  // one GPU per server
  b.replica = groups.shard;  // B is replicated across rails: each server holds one shard
  b.shard_size = servers;
  for (double x : alpha) b.unit_fraction.push_back(1 - x);
  b.gather_stream = g.Stream("comm_inter");
  b.scatter_stream = g.Stream("comm_rs_inter");
  p.fragments = {a, b};
  p.prefetch = prefetch;
  p.micro_batches = micro_batches;
  p.iterations = tr.warmup_iterations + tr.measured_iterations;
  p.state_params = 0;
  for (int u = 0; u < num_units; ++u) {
    p.state_params += unit_params[u] * (alpha[u] / per_server + (1 - alpha[u]) / servers);
  }
  p.step_params = p.state_params;
  const double moved = LowerFsdpUnits(g, w, tr.precision, act, e, p, folded);

  plan.notes.push_back("fraction in fragment A (sharded over the " + std::to_string(per_server) +
                       " GPUs of a server; the rest over the " + std::to_string(servers) +
                       " servers): " + SplitText(w, p.units, alpha));
  char buf[300];
  std::snprintf(buf, sizeof buf,
                "hsdp over %d servers x %d GPUs: %d micro-batch(es) of %d per GPU, %.3g M "
                "parameters in %d FSDP units%s",
                servers, per_server, micro_batches, tr.micro_batch, w.params / 1e6, num_units,
                prefetch ? ", one-unit prefetch" : "");
  plan.notes.push_back(buf);
  plan.notes.push_back("memory per GPU: model states " +
                       FormatBytes(AdamStateBytesPerParam(tr.precision) * p.state_params) +
                       ", activations " + FormatBytes(PeakActivationBytes(w, 1)) + "; " +
                       FormatBytes(moved / p.iterations) +
                       " moved per rank per iteration in all-gathers and reduce-scatters");
  return plan;
}

}  // namespace stratasim
