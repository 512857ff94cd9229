#include "strategies/precision/precision_lowering.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "core/units.h"
#include "models/memory.h"
#include "models/recompute.h"
#include "strategies/batching.h"
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
  const int gpus = s.cluster.NumGpus();
  const int micro_batches = MicroBatchesPerReplica(
      tr, gpus, "data parallelism over " + std::to_string(gpus) + " GPUs", opt);

  DataParallelWork work;
  Workload& w = work.workload;
  w = BuildWorkload(s.model, tr.micro_batch, tr.precision, tr.seed);
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
  work.buckets = MakeGradientBuckets(w.layers, lp.grad_bytes, o.bucket_cap_bytes);
  work.decode_bytes.assign(work.buckets.size(), 0);
  const std::vector<int> bucket_of = BucketOfLayer(work.buckets, static_cast<int>(w.layers.size()));
  for (size_t l = 0; l < w.layers.size(); ++l) {
    if (bucket_of[l] >= 0) work.decode_bytes[bucket_of[l]] += lp.decode_bytes[l];
  }

  Plan plan = LowerDataParallel(s, o, work, micro_batches);
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
