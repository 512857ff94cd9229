#include "strategies/data/data_parallel.h"

#include <cstdio>

#include "core/units.h"
#include "models/memory.h"
#include "strategies/fold.h"
#include "strategies/layer_tasks.h"

namespace stratasim {
namespace {

std::string Printf(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

}  // namespace

DdpSettings ReadDdpSettings(OptionReader& opt) {
  DdpSettings o;
  o.bucket_cap_bytes = opt.Bytes("bucket_size");
  o.overlap = opt.Bool("overlap");
  o.algorithm = opt.Choice("algorithm");
  o.gradient_as_bucket_view = opt.Bool("gradient_as_bucket_view");
  return o;
}

Plan LowerDataParallel(const Scenario& s, const DdpSettings& o, const DataParallelWork& work,
                       int micro_batches) {
  const TrainingSpec& tr = s.training;
  const int gpus = s.cluster.NumGpus();
  const Workload& w = work.workload;
  const std::vector<GradientBucket>& buckets = work.buckets;
  // Of kernels without a format of their own, and of gradients (BF16 in FP8 training).
  const DType act = StorageDType(tr.precision);
  double grad_total = 0;
  for (const GradientBucket& b : buckets) grad_total += b.bytes;

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
  // Folding (strategies/fold.h): the GPUs of the first server(s) compute; the others keep their
  // members of the all-reduces as mirrors.
  const FoldDecision folding = DecideFold(s, ReplicaLayout{gpus, 1, 1});
  const int block = folding.fold ? folding.block_gpus : gpus;
  plan.fold = DescribeFold(folding, gpus);
  // Set before any task, so that figures measured as tasks retire know it (docs/scale.md).
  if (folding.fold) g.SetFold(FoldRepresentatives(gpus, block));

  const int iterations = tr.warmup_iterations + tr.measured_iterations;
  for (int it = 0; it < iterations; ++it) {
    // grads_ready[r][layer]: the task after which rank r's gradients of `layer` are final.
    std::vector<std::vector<TaskId>> grads_ready(gpus, std::vector<TaskId>(w.layers.size(), -1));
    std::vector<TaskId> backward_end(gpus, -1);
    for (int r = 0; r < block; ++r) {
      TaskPlace at{r, compute, it, ""};
      if (it == 0) {
        AddModelStates(g, at, w.params, tr.precision);
        // DDP's Reducer copies gradients into flat bucket buffers unless gradients are views
        // into them (gradient_as_bucket_view, PyTorch >= 1.7).
        if (!o.gradient_as_bucket_view) {
          AddMemory(g, at, "ddp_buckets", "comm_buffers", grad_total);
        }
      }
      TaskId last = -1;
      for (int mb = 0; mb < micro_batches; ++mb) {
        at.prefix = "it" + std::to_string(it) + "/mb" + std::to_string(mb) + "/";
        for (const LayerCost& layer : w.layers) last = AddForward(g, layer, act, at, last);
        for (int i = static_cast<int>(w.layers.size()) - 1; i >= 0; --i) {
          last = AddBackward(g, w.layers[i], act, at, last);
          grads_ready[r][i] = last;
        }
      }
      backward_end[r] = last;
    }

    // One all-reduce per bucket, on the communication stream, in bucket order.
    std::vector<std::vector<TaskId>> bucket_members;
    for (size_t k = 0; k < buckets.size(); ++k) {
      Collective c;
      c.kind = CollectiveKind::kAllReduce;
      c.ranks = all;
      c.bytes = buckets[k].bytes;
      c.dtype = act;
      c.algorithm = o.algorithm;
      Task member;
      member.stream = comm;
      member.iteration = it;
      member.phase = Phase::kCommunication;
      member.category = "dp";
      member.name = "it" + std::to_string(it) + "/allreduce/bucket" + std::to_string(k);
      std::vector<TaskId> ids = g.AddCollective(c, member);
      for (int r = 0; r < gpus; ++r) {
        if (r >= block) {
          g.SetMirror(ids[r], ids[r % block]);
        } else {
          g.AddDep(ids[r],
                   o.overlap ? grads_ready[r][buckets[k].ready_after_layer] : backward_end[r]);
        }
      }
      bucket_members.push_back(std::move(ids));
    }

    for (int r = 0; r < block; ++r) {
      Task step = AdamStepTask(w.params, tr.precision);
      step.rank = r;
      step.stream = compute;
      step.iteration = it;
      step.name = "it" + std::to_string(it) + "/adam";
      for (size_t k = 0; k < bucket_members.size(); ++k) {
        const double decode = k < work.decode_bytes.size() ? work.decode_bytes[k] : 0;
        if (decode <= 0) {
          step.deps.push_back(bucket_members[k][r]);
          continue;
        }
        Task t;
        t.kind = TaskKind::kCompute;
        t.rank = r;
        t.stream = compute;
        t.iteration = it;
        t.phase = Phase::kOptimizer;
        t.op = OpKind::kElementwise;
        t.dtype = act;
        t.name = "it" + std::to_string(it) + "/decode/bucket" + std::to_string(k);
        t.bytes = decode;
        t.deps.push_back(bucket_members[k][r]);
        step.deps.push_back(g.Add(std::move(t)));
      }
      g.Add(std::move(step));
    }
  }

  plan.notes.push_back(std::to_string(micro_batches) + " micro-batch(es) of " +
                       std::to_string(tr.micro_batch) + " per GPU per iteration");
  plan.notes.push_back(std::to_string(buckets.size()) + " gradient bucket(s) of up to " +
                       FormatBytes(o.bucket_cap_bytes) + ", " + FormatBytes(grad_total) +
                       " all-reduced per iteration, " +
                       (o.overlap ? "overlapped with backward" : "after backward"));
  plan.notes.push_back(Printf("%.3g M parameters", w.params / 1e6));
  const ModelStateBytes states = AdamStateBytes(w.params, tr.precision);
  plan.notes.push_back(
      "memory per GPU: model states " + FormatBytes(states.Total()) + ", activations " +
      FormatBytes(PeakActivationBytes(w, 1)) + " (recompute " + std::string(ToString(w.recompute)) +
      ")" + (o.gradient_as_bucket_view ? "" : ", gradient buckets " + FormatBytes(grad_total)));
  return plan;
}

}  // namespace stratasim
