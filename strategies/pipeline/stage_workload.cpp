#include "strategies/pipeline/stage_workload.h"

#include "models/recompute.h"
#include "models/sub_layers.h"
#include "strategies/pipeline/context_parallel.h"
#include "strategies/tensor/megatron.h"

namespace stratasim {

Workload PipelineStageWorkload(const Scenario& s, const PipelineShape& o,
                               const StageWorkloadChoice& choice) {
  const TrainingSpec& tr = s.training;
  const int b = choice.micro_batch > 0 ? choice.micro_batch : tr.micro_batch;
  ModelSpec model = s.model;
  if (choice.recompute) {
    model.recompute = *choice.recompute;
    model.recompute_layers = 0;
  }
  const bool reshaped = choice.sub_layers || !choice.recompute_layers.empty();
  if (!reshaped && o.t == 1 && o.c == 1) return BuildWorkload(model, b, tr.precision, tr.seed);
  // Split and sharded without recomputation, which is applied to the final layers.
  ModelSpec plain = s.model;
  plain.recompute = Recompute::kNone;
  Workload w = o.c > 1 ? ContextParallelWorkload(plain, b, tr.precision, tr.seed, o.c)
                       : BuildWorkload(plain, b, tr.precision, tr.seed);
  if (!reshaped) {
    if (o.t == 1) {
      ApplyRecompute(w, model.recompute, model.recompute_layers);
      return w;
    }
    return TensorParallelShard(w, o.t, o.sp, model);
  }
  if (choice.sub_layers) w = SplitSubLayers(w);
  if (o.t > 1) w = TensorParallelShard(w, o.t, o.sp, plain);
  if (choice.recompute_layers.empty()) {
    ApplyRecompute(w, model.recompute, model.recompute_layers);
  } else {
    ApplyRecompute(w, choice.recompute.value_or(Recompute::kFull), choice.recompute_layers);
  }
  return w;
}

}  // namespace stratasim
