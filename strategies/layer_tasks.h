// Emits a model's kernels as compute tasks: the building blocks every strategy lowers to.
#ifndef STRATASIM_STRATEGIES_LAYER_TASKS_H_
#define STRATASIM_STRATEGIES_LAYER_TASKS_H_

#include <string>
#include <vector>

#include "core/task_graph.h"
#include "models/memory.h"
#include "models/workload.h"

namespace stratasim {

// Where the tasks go: which rank and stream, in which iteration, named with which prefix.
struct TaskPlace {
  int rank = 0;
  int stream = 0;
  int iteration = 0;
  std::string prefix;  // e.g. "mb0/" for micro-batch 0
};

// The compute task of one kernel `cost` of an op of kind `op` (in `dtype` unless the kernel has
// its own, as an FP8 GEMM does), named prefix + name.
Task KernelTask(const TaskPlace& at, const std::string& name, OpKind op, DType dtype,
                const KernelCost& cost, Phase phase);

// Adds the forward kernels of `layer` in order, the first depending on `after` (if >= 0), and
// then allocates the layer's saved activations (category "activations"). Returns the id of the
// last kernel.
TaskId AddForward(TaskGraph& g, const LayerCost& layer, DType dtype, const TaskPlace& at,
                  TaskId after);
// Adds the backward of `layer`: when it is recomputed, first allocates the re-created
// activations and re-runs the recomputed ops' forward (Phase::kRecompute, in forward order);
// then per op in reverse order its input-gradient kernel and its weight-gradient kernel; then
// frees the layer's activations. Returns the id of the last kernel (after which the layer's
// weight gradients are ready).
TaskId AddBackward(TaskGraph& g, const LayerCost& layer, DType dtype, const TaskPlace& at,
                   TaskId after);
// A zero-duration memory event on the rank's stream.
TaskId AddMemory(TaskGraph& g, const TaskPlace& at, const std::string& name,
                 const std::string& category, double delta_bytes);

// Allocates the model states of `params` parameters with mixed-precision Adam, sharded as
// `sharding` says (models/memory.h), as three memory events: "weights", "gradients",
// "optimizer". `grad_bytes_per_param` as AdamStateBytes takes it. Returns the id of the last.
TaskId AddModelStates(TaskGraph& g, const TaskPlace& at, double params, DType precision,
                      StateSharding sharding = {}, double grad_bytes_per_param = 0);

// Adds one collective of `kind` per group in `groups` (members in group order), its member
// tasks on `stream` named `name`, each after deps[rank] when that is >= 0 (deps is indexed by
// rank). Returns each rank's member id, -1 for ranks in no group.
std::vector<TaskId> AddGroupCollectives(TaskGraph& g, const std::vector<std::vector<int>>& groups,
                                        CollectiveKind kind, double bytes, DType dtype, int stream,
                                        int iteration, const Name& name,
                                        const std::vector<TaskId>& deps,
                                        const std::string& category = "dp",
                                        Phase phase = Phase::kCommunication);

// Bytes of model state per parameter with Adam: AdamStateBytes(1, precision).Total().
double AdamStateBytesPerParam(DType precision);
// An Adam step over `params` parameters as one fused memory-bound kernel: it reads the
// gradient and reads and writes the FP32 master weight and both moments (plus writes the 16-bit
// weight copy when training in 16 bits); about 10 FP32 FLOPs per parameter.
Task AdamStepTask(double params, DType precision);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_LAYER_TASKS_H_
