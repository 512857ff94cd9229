// The workload one GPU of a pipeline stage runs, as the pipeline and 3D strategies build it
// (PlanPipeline) and as the pipeline planners' lowering builds it for the blocks, micro-batch
// sizes and recomputation a planner chose (strategies/planners/planner.h).
#ifndef STRATASIM_STRATEGIES_PIPELINE_STAGE_WORKLOAD_H_
#define STRATASIM_STRATEGIES_PIPELINE_STAGE_WORKLOAD_H_

#include <optional>
#include <vector>

#include "core/scenario.h"
#include "models/workload.h"
#include "strategies/pipeline/pipeline_lowering.h"

namespace stratasim {

// What to build beyond the shape; the defaults give the workload of kind pipeline / 3d.
struct StageWorkloadChoice {
  int micro_batch = 0;  // samples per micro-batch; 0: training.micro_batch
  // Each transformer layer as its attention and MLP halves (models/sub_layers.h), the blocks
  // the planners partition.
  bool sub_layers = false;
  // The recomputation; unset: the model's (model.recompute on its first model.recompute_layers
  // recomputable layers, which count halves with sub_layers).
  std::optional<Recompute> recompute;
  // When not empty: one flag per layer of the built workload (after the sub-layer split), and
  // only the flagged recomputable layers are recomputed, with `recompute` (full when unset).
  std::vector<bool> recompute_layers;
};

// The workload of one GPU of a stage of `o`: the model's sequences split o.c ways (context
// parallelism, strategies/pipeline/context_parallel.h), its layers split as `choice` says and
// sharded o.t ways (tensor parallelism with o.sp, strategies/tensor/megatron.h), with the
// recomputation applied last. Throws Error when choice.recompute_layers does not have one flag
// per layer, and ConfigError for a model the micro-batch size cannot build.
Workload PipelineStageWorkload(const Scenario& s, const PipelineShape& o,
                               const StageWorkloadChoice& choice = {});

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PIPELINE_STAGE_WORKLOAD_H_
