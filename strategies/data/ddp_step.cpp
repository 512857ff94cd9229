#include "strategies/data/ddp_step.h"

#include <cstdio>

#include "core/units.h"
#include "models/memory.h"
#include "strategies/batching.h"
#include "strategies/fold.h"

namespace stratasim {

DdpSettings ReadDdpSettings(OptionReader& opt) {
  DdpSettings o;
  o.bucket_cap_bytes = opt.Bytes("bucket_size");
  o.overlap = opt.Bool("overlap");
  o.algorithm = opt.Choice("algorithm");
  o.bucket_view = opt.Bool("gradient_as_bucket_view");
  return o;
}

DdpStep::DdpStep(const Scenario& s, const DdpSettings& o, const OptionReader& opt)
    : s_(s), o_(o), gpus_(s.cluster.NumGpus()) {
  const TrainingSpec& tr = s.training;
  micro_batches_ = MicroBatchesPerReplica(
      tr, gpus_, "data parallelism over " + std::to_string(gpus_) + " GPUs", opt);
  // Every micro-batch has the same shape; a sampled workload (GraphSAGE) uses the counts of one
  // sampled mini-batch for all of them.
  w_ = BuildWorkload(s.model, tr.micro_batch, tr.precision, tr.seed);
  grad_bytes_ = TrainingBytesPerParam(tr.precision);
  act_ = StorageDType(tr.precision);  // of kernels and gradients (BF16 in FP8 training)
}

TaskId DdpStep::ReadyAfter(const GradientsReady& ready, int r, int layer) const {
  return o_.overlap ? ready.after_layer[r][layer] : ready.backward_end[r];
}

std::vector<TaskId> DdpStep::AddCollective(Collective c, int iteration, const std::string& name,
                                           const std::string& category,
                                           const std::function<std::vector<TaskId>(int r)>& deps) {
  c.ranks = all_;
  Task member;
  member.stream = comm_;
  member.iteration = iteration;
  member.phase = Phase::kCommunication;
  member.category = category;
  member.name = name;
  TaskGraph& g = plan_.graph;
  std::vector<TaskId> ids = g.AddCollective(c, member);
  for (int r = 0; r < gpus_; ++r) {
    if (r >= block_) {
      g.SetMirror(ids[r], ids[r % block_]);
    } else {
      for (TaskId d : deps(r)) g.AddDep(ids[r], d);
    }
  }
  return ids;
}

std::vector<TaskId> DdpStep::AddBucketAllReduce(const GradientsReady& ready, int layer,
                                                double bytes, const std::string& name) {
  Collective c;
  c.kind = CollectiveKind::kAllReduce;
  c.bytes = bytes;
  c.dtype = act_;
  c.algorithm = o_.algorithm;
  return AddCollective(c, ready.iteration, name, "dp",
                       [&](int r) { return std::vector<TaskId>{ReadyAfter(ready, r, layer)}; });
}

Plan DdpStep::Lower(const Exchange& exchange, const StartMemory& start_memory) {
  const TrainingSpec& tr = s_.training;
  plan_.graph = TaskGraph(gpus_);
  if (s_.simulation.max_tasks > 0) plan_.graph.SetTaskLimit(s_.simulation.max_tasks);
  plan_.samples_per_iteration = static_cast<double>(tr.global_batch);
  plan_.tokens_per_sample = w_.tokens_per_sample;
  TaskGraph& g = plan_.graph;
  compute_ = g.Stream("compute");
  comm_ = g.Stream("comm");
  all_.assign(gpus_, 0);
  for (int r = 0; r < gpus_; ++r) all_[r] = r;
  // Folding (strategies/fold.h): the GPUs of the first server(s) compute; the others keep their
  // members of the all-reduces as mirrors.
  FoldDecision folding = DecideFold(s_, ReplicaLayout{gpus_, 1, 1});
  if (folding.fold && !fold_refusal_.empty()) folding = FoldDecision{false, 0, 0, fold_refusal_};
  block_ = folding.fold ? folding.block_gpus : gpus_;
  plan_.fold = DescribeFold(folding, gpus_);
  // Set before any task, so that figures measured as tasks retire know it (docs/scale.md).
  if (folding.fold) g.SetFold(FoldRepresentatives(gpus_, block_));

  const int iterations = tr.warmup_iterations + tr.measured_iterations;
  for (int it = 0; it < iterations; ++it) {
    GradientsReady ready;
    ready.iteration = it;
    ready.after_layer.assign(gpus_, std::vector<TaskId>(w_.layers.size(), -1));
    ready.backward_end.assign(gpus_, -1);
    for (int r = 0; r < block_; ++r) {
      TaskPlace at{r, compute_, it, ""};
      if (it == 0) {
        AddModelStates(g, at, w_.params, tr.precision);
        start_memory(g, at);
      }
      TaskId last = -1;
      for (int mb = 0; mb < micro_batches_; ++mb) {
        at.prefix = "it" + std::to_string(it) + "/mb" + std::to_string(mb) + "/";
        for (const LayerCost& layer : w_.layers) last = AddForward(g, layer, act_, at, last);
        for (int i = static_cast<int>(w_.layers.size()) - 1; i >= 0; --i) {
          last = AddBackward(g, w_.layers[i], act_, at, last);
          ready.after_layer[r][i] = last;
        }
      }
      ready.backward_end[r] = last;
    }

    const std::vector<std::vector<TaskId>> step_deps = exchange(ready);

    for (int r = 0; r < block_; ++r) {
      Task step = AdamStepTask(w_.params, tr.precision);
      step.rank = r;
      step.stream = compute_;
      step.iteration = it;
      step.name = "it" + std::to_string(it) + "/adam";
      step.deps = step_deps[r];
      g.Add(std::move(step));
    }
  }

  plan_.notes.push_back(std::to_string(micro_batches_) + " micro-batch(es) of " +
                        std::to_string(tr.micro_batch) + " per GPU per iteration");
  return std::move(plan_);
}

void AddDdpNotes(const DdpStep& step, size_t buckets, double grad_total, Plan& plan) {
  const DdpSettings& o = step.settings();
  const Workload& w = step.workload();
  plan.notes.push_back(std::to_string(buckets) + " gradient bucket(s) of up to " +
                       FormatBytes(o.bucket_cap_bytes) + ", " + FormatBytes(grad_total) +
                       " all-reduced per iteration, " +
                       (o.overlap ? "overlapped with backward" : "after backward"));
  char params[64];
  std::snprintf(params, sizeof params, "%.3g M parameters", w.params / 1e6);
  plan.notes.push_back(params);
  const ModelStateBytes states = AdamStateBytes(w.params, step.precision());
  plan.notes.push_back("memory per GPU: model states " + FormatBytes(states.Total()) +
                       ", activations " + FormatBytes(PeakActivationBytes(w, 1)) + " (recompute " +
                       std::string(ToString(w.recompute)) + ")" +
                       (o.bucket_view ? "" : ", gradient buckets " + FormatBytes(grad_total)));
}

}  // namespace stratasim
