// Emits a model's kernels as compute tasks: the building blocks every strategy lowers to.
#ifndef STRATASIM_STRATEGIES_LAYER_TASKS_H_
#define STRATASIM_STRATEGIES_LAYER_TASKS_H_

#include <string>

#include "core/task_graph.h"
#include "models/gpt.h"

namespace stratasim {

// Where the tasks go: which rank and stream, in which iteration, named with which prefix.
struct TaskPlace {
  int rank = 0;
  int stream = 0;
  int iteration = 0;
  std::string prefix;  // e.g. "mb0/" for micro-batch 0
};

// Adds the forward kernels of `layer` in order, the first depending on `after` (if >= 0), and
// then allocates the layer's saved activations. Returns the id of the last task added.
TaskId AddForward(TaskGraph& g, const LayerCost& layer, DType dtype, const TaskPlace& at,
                  TaskId after);
// Adds the backward kernels of `layer` in reverse order, then frees its activations. Returns
// the id of the last kernel (after which the layer's weight gradients are ready).
TaskId AddBackward(TaskGraph& g, const LayerCost& layer, DType dtype, const TaskPlace& at,
                   TaskId after);
// A zero-duration memory event on the rank's stream.
TaskId AddMemory(TaskGraph& g, const TaskPlace& at, const std::string& name,
                 const std::string& category, double delta_bytes);

// Bytes of model state per parameter with Adam (Rajbhandari et al. 2020, "ZeRO", §3.1):
// weights and gradients in the training precision, plus FP32 Adam moments (and FP32 master
// weights when training in 16 bits): 2 + 2 + 12 = 16 bytes for FP16/BF16.
double AdamStateBytesPerParam(DType precision);
// An Adam step over `params` parameters as one fused memory-bound kernel: it reads the
// gradient and reads and writes the FP32 master weight and both moments (plus writes the 16-bit
// weight copy when training in 16 bits); about 10 FP32 FLOPs per parameter.
Task AdamStepTask(double params, DType precision);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_LAYER_TASKS_H_
