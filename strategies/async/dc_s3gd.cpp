// DC-S3GD (Rigazzi et al., "DC-S3GD: Delay-Compensated Stale-Synchronous SGD for Large-Scale
// Decentralized Neural Network Training", arXiv 1911.02516): every worker computes its update
// of iteration t on its local weights, starts a non-blocking all-reduce of that model-size
// update, and goes on with iteration t + 1 at once; only at the end of t + 1 does it wait for
// the all-reduced update of t, merge it into its copy of the global weights and correct the
// gradient of t + 1 for the delay, as DC-ASGD does (Zheng et al., ICML 2017):
// g^ = g + lambda * g (.) g (.) D, with D the distance between its local and the global weights.
// So the all-reduce overlaps a whole forward and backward pass (staleness 1), and the
// compensation adds memory-bound element-wise passes and model-size buffers.
#include <cstdio>
#include <string>
#include <vector>

#include "core/collective_names.h"
#include "core/units.h"
#include "models/memory.h"
#include "models/workload.h"
#include "strategies/async/async.h"
#include "strategies/async/worker_passes.h"
#include "strategies/batching.h"
#include "strategies/layer_tasks.h"

namespace stratasim {

const OptionSpecs& DcS3gdOptions() {
  static const OptionSpecs options = {
      OneOf("algorithm", CollectiveAlgorithms(CollectiveKind::kAllReduce),
            "algorithm of the update all-reduce (docs/collectives.md); auto lets the "
            "simulator's tuner choose, as NCCL does")
          .Default("auto"),
      Flag("delay_compensation",
           "correct each gradient for the delay (DC-ASGD's g + lambda g (.) g (.) D); false: "
           "stale-synchronous SGD without it (one buffer and two element-wise passes fewer)")
          .Default("true"),
  };
  return options;
}

Plan PlanDcS3gd(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, DcS3gdOptions());
  const std::string algorithm = opt.Choice("algorithm");
  const bool compensate = opt.Bool("delay_compensation");
  opt.Finish();

  const TrainingSpec& tr = s.training;
  const int gpus = s.cluster.NumGpus();
  const int micro_batches = MicroBatchesPerReplica(
      tr, gpus, "DC-S3GD data parallelism over " + std::to_string(gpus) + " GPUs", opt);
  const Workload w = BuildWorkload(s.model, tr.micro_batch, tr.precision, tr.seed);
  const DType act = StorageDType(tr.precision);
  const double e = TrainingBytesPerParam(tr.precision);
  const double p = w.params;
  // Updates, the global copy of the weights and the delay D are kept in FP32: an update is a
  // difference of FP32 master weights, which 16 bits would round away.
  constexpr double kFp32 = 4;
  const double model_fp32 = p * kFp32;

  Plan plan;
  plan.graph = TaskGraph(gpus);
  if (s.simulation.max_tasks > 0) plan.graph.SetTaskLimit(s.simulation.max_tasks);
  plan.samples_per_iteration = static_cast<double>(tr.global_batch);
  plan.tokens_per_sample = w.tokens_per_sample;
  TaskGraph& g = plan.graph;
  const int compute = g.Stream("compute");
  const int comm = g.Stream("comm");
  std::vector<int> all(gpus);
  for (int r = 0; r < gpus; ++r) all[r] = r;

  // The extra model-size buffers (FP32): the update being all-reduced, the global weights, and
  // with compensation the delay D.
  const int buffers = compensate ? 3 : 2;
  const int iterations = tr.warmup_iterations + tr.measured_iterations;
  std::vector<TaskId> pending(gpus, -1);  // [rank]: the all-reduce member of the last update
  // Merges the all-reduced update into the global weights (read the sum, read and write the
  // global copy) and, with compensation, forms D = local - global (read local, write D).
  auto merge = [&](const TaskPlace& at, TaskId after) {
    Task m = ElementwiseTask(at, "dc/merge_update", Phase::kOptimizer, (compensate ? 3 : 2) * p,
                             (compensate ? 5 : 3) * model_fp32);
    m.deps = {after};
    return g.Add(std::move(m));
  };
  for (int t = 0; t < iterations; ++t) {
    const std::string it = "it" + std::to_string(t) + "/";
    std::vector<TaskId> ready(gpus);
    for (int r = 0; r < gpus; ++r) {
      TaskPlace at{r, compute, t, ""};
      if (t == 0) {
        AddModelStates(g, at, p, tr.precision);
        AddMemory(g, at, "dc_s3gd_update", "comm_buffers", model_fp32);
        AddMemory(g, at, "dc_s3gd_global_weights", "optimizer", model_fp32);
        if (compensate) AddMemory(g, at, "dc_s3gd_delay", "optimizer", model_fp32);
      }
      // The next forward pass waits for nothing but this rank's own previous step.
      AddWorkerPasses(g, w, act, at, micro_batches, {});
      at.prefix = it;
      if (pending[r] >= 0) {
        merge(at, pending[r]);
        if (compensate) {
          // g^ = g + lambda g (.) g (.) D: read g and D, write g^ (3 FLOPs per parameter).
          g.Add(ElementwiseTask(at, "dc/compensate", Phase::kOptimizer, 3 * p,
                                2 * p * e + model_fp32));
        }
      }
      Task step = AdamStepTask(p, tr.precision);
      step.rank = r;
      step.stream = compute;
      step.iteration = t;
      step.name = it + "adam";
      g.Add(std::move(step));
      // The update of t: new local weights - global weights (read both, write the update).
      ready[r] = g.Add(ElementwiseTask(at, "dc/form_update", Phase::kOptimizer, p, 3 * model_fp32));
    }
    Collective c;
    c.kind = CollectiveKind::kAllReduce;
    c.ranks = all;
    c.bytes = model_fp32;
    c.dtype = DType::kFP32;
    c.algorithm = algorithm;
    Task member;
    member.stream = comm;
    member.iteration = t;
    member.phase = Phase::kCommunication;
    member.category = "dp";
    member.name = it + "allreduce_update";
    const std::vector<TaskId> ids = g.AddCollective(c, member);
    for (int r = 0; r < gpus; ++r) {
      g.AddDep(ids[r], ready[r]);
      pending[r] = ids[r];
    }
  }
  // The last update is merged before training ends, so that every rank holds the same model.
  for (int r = 0; r < gpus; ++r) {
    merge(TaskPlace{r, compute, iterations - 1, "it" + std::to_string(iterations - 1) + "/"},
          pending[r]);
  }

  plan.notes.push_back(std::to_string(micro_batches) + " micro-batch(es) of " +
                       std::to_string(tr.micro_batch) + " per GPU per iteration");
  plan.notes.push_back("non-blocking all-reduce of the " + FormatBytes(model_fp32) +
                       " FP32 update of iteration t, overlapped with the forward and backward "
                       "of t + 1 and merged at its end (staleness 1 by construction)");
  plan.notes.push_back(compensate ? "delay compensation (DC-ASGD): two element-wise passes per "
                                    "iteration besides Adam"
                                  : "no delay compensation");
  char params[64];
  std::snprintf(params, sizeof params, "%.3g M parameters", p / 1e6);
  plan.notes.push_back(params);
  const ModelStateBytes states = AdamStateBytes(p, tr.precision);
  plan.notes.push_back("memory per GPU: model states " + FormatBytes(states.Total()) + " and " +
                       std::to_string(buffers) + " FP32 model-size buffer(s) " +
                       FormatBytes(buffers * model_fp32));
  return plan;
}

}  // namespace stratasim
