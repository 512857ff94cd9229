#include "strategies/precision/precision_lowering.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "core/units.h"
#include "models/memory.h"
#include "models/recompute.h"
#include "strategies/distributed_optimizer.h"
#include "strategies/gradient_buckets.h"

namespace stratasim {
namespace {

struct FormatShare {
  int layers = 0;
  double params = 0;
  double min_params = 0, max_params = 0;
  double gemm_flops = 0;
};

std::string Describe(DType d, const FormatShare& f, double all_flops) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "%s: %d weight layer(s), %.3g M parameters (%.3g to %.3g M each), %.1f%% of the "
                "weight GEMMs' FLOPs",
                std::string(ToString(d)).c_str(), f.layers, f.params / 1e6, f.min_params / 1e6,
                f.max_params / 1e6, all_flops > 0 ? 100 * f.gemm_flops / all_flops : 0.0);
  return buf;
}

}  // namespace

Plan PlanLayerPrecision(const Scenario& s, const DdpSettings& o, const OptionReader& opt,
                        const FormatPolicy& policy) {
  const TrainingSpec& tr = s.training;
  DdpStep step(s, o, opt);
  Workload w = step.workload();
  const std::vector<WeightLayer> weights = WeightLayers(w);
  const std::vector<DType> formats = policy(weights);
  // What each format gets, before the ops change (their FLOPs do not).
  std::map<int, FormatShare> share;  // by position of the format's first layer, for the notes
  std::vector<DType> order;
  double all_flops = 0;
  for (size_t i = 0; i < weights.size() && i < formats.size(); ++i) {
    const OpCost& op = w.layers[weights[i].layer].ops[weights[i].op];
    size_t at = 0;
    while (at < order.size() && order[at] != formats[i]) ++at;
    if (at == order.size()) order.push_back(formats[i]);
    FormatShare& f = share[static_cast<int>(at)];
    const double p = weights[i].params, flops = op.forward.flops + op.BackwardFlops();
    f.min_params = f.layers == 0 ? p : std::min(f.min_params, p);
    f.max_params = f.layers == 0 ? p : std::max(f.max_params, p);
    ++f.layers;
    f.params += p;
    f.gemm_flops += flops;
    all_flops += flops;
  }

  const double grad_bytes_per_param = TrainingBytesPerParam(tr.precision);
  const LayerPrecision lp =
      ApplyLayerFormats(w, formats, StorageDType(tr.precision), grad_bytes_per_param);
  // The casts changed what the GEMMs keep: recompute the activations' bookkeeping.
  ApplyRecompute(w, s.model.recompute, s.model.recompute_layers);
  const std::vector<GradientBucket> buckets =
      MakeGradientBuckets(w.layers, lp.grad_bytes, o.bucket_cap_bytes);
  std::vector<double> decode_bytes(buckets.size(), 0);
  const std::vector<int> bucket_of = BucketOfLayer(buckets, static_cast<int>(w.layers.size()));
  for (size_t l = 0; l < w.layers.size(); ++l) {
    if (bucket_of[l] >= 0) decode_bytes[bucket_of[l]] += lp.decode_bytes[l];
  }
  double grad_total = 0;
  for (const GradientBucket& b : buckets) grad_total += b.bytes;
  step.ReplaceWorkload(std::move(w));

  Plan plan = step.Lower(
      // DDP's all-reduce per bucket at its layers' bit widths; then, on the compute stream, the
      // kernel that dequantizes the bucket back to the storage format before the Adam step.
      [&](const GradientsReady& ready) {
        std::vector<std::vector<TaskId>> step_deps(step.gpus());
        const std::string it = "it" + std::to_string(ready.iteration);
        for (size_t k = 0; k < buckets.size(); ++k) {
          const std::vector<TaskId> ids =
              step.AddBucketAllReduce(ready, buckets[k].ready_after_layer, buckets[k].bytes,
                                      it + "/allreduce/bucket" + std::to_string(k));
          for (int r = 0; r < step.block(); ++r) {
            if (decode_bytes[k] <= 0) {
              step_deps[r].push_back(ids[r]);
              continue;
            }
            Task t;
            t.kind = TaskKind::kCompute;
            t.rank = r;
            t.stream = step.compute_stream();
            t.iteration = ready.iteration;
            t.phase = Phase::kOptimizer;
            t.op = OpKind::kElementwise;
            t.dtype = step.act();
            t.name = it + "/decode/bucket" + std::to_string(k);
            t.bytes = decode_bytes[k];
            t.deps.push_back(ids[r]);
            step_deps[r].push_back(step.graph().Add(std::move(t)));
          }
        }
        return step_deps;
      },
      // DDP's Reducer copies gradients into flat bucket buffers unless gradients are views
      // into them (gradient_as_bucket_view, PyTorch >= 1.7).
      [&](TaskGraph& g, const TaskPlace& at) {
        if (!o.bucket_view) AddMemory(g, at, "ddp_buckets", "comm_buffers", grad_total);
      });
  AddDdpNotes(step, buckets.size(), grad_total, plan);
  for (size_t k = 0; k < order.size(); ++k) {
    plan.notes.push_back(Describe(order[k], share[static_cast<int>(k)], all_flops));
  }
  double wire = 0;
  for (double b : lp.grad_bytes) wire += b;
  plan.notes.push_back("gradients on the wire: " + FormatBytes(wire) + " per iteration (" +
                       FormatBytes(w.params * grad_bytes_per_param) + " in " +
                       std::string(ToString(StorageDType(tr.precision))) + ")");
  return plan;
}

}  // namespace stratasim
