#include "strategies/async/worker_passes.h"

namespace stratasim {

TaskId AddWorkerPasses(TaskGraph& g, const Workload& w, DType act, const TaskPlace& at,
                       int micro_batches, const std::vector<TaskId>& first_deps) {
  TaskPlace place = at;
  TaskId last = -1;
  bool first = true;
  for (int mb = 0; mb < micro_batches; ++mb) {
    place.prefix = "it" + std::to_string(at.iteration) + "/mb" + std::to_string(mb) + "/";
    for (const LayerCost& layer : w.layers) {
      const TaskId before = g.next_id();
      last = AddForward(g, layer, act, place, last);
      if (first) {
        // The first task AddForward added (a kernel or the layer's activation allocation).
        for (TaskId d : first_deps) g.AddDep(before, d);
        first = false;
      }
    }
    for (int i = static_cast<int>(w.layers.size()) - 1; i >= 0; --i) {
      last = AddBackward(g, w.layers[i], act, place, last);
    }
  }
  return last;
}

Task ElementwiseTask(const TaskPlace& at, const std::string& name, Phase phase, double flops,
                     double bytes) {
  Task t;
  t.kind = TaskKind::kCompute;
  t.phase = phase;
  t.op = OpKind::kElementwise;
  t.dtype = DType::kFP32;
  t.rank = at.rank;
  t.stream = at.stream;
  t.iteration = at.iteration;
  t.name = at.prefix + name;
  t.flops = flops;
  t.bytes = bytes;
  return t;
}

}  // namespace stratasim
