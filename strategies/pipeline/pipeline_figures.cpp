#include "strategies/pipeline/pipeline_figures.h"

#include "core/error.h"
#include "strategies/pipeline/pipeline.h"

namespace stratasim {

std::string StagePartitionText(const Workload& w, const std::vector<int>& bounds, int stages) {
  const int layers = static_cast<int>(w.layers.size());
  const int chunks = static_cast<int>(bounds.size()) - 1;
  if (stages < 1 || chunks < stages || chunks % stages != 0 || bounds.front() != 0 ||
      bounds.back() != layers) {
    throw Error("pipeline figures: " + std::to_string(chunks) + " chunk(s) of " +
                std::to_string(layers) + " layers do not fit " + std::to_string(stages) +
                " stage(s)");
  }
  // The repeated blocks, as PartitionFromCounts counts them.
  const auto [first, last] = RepeatedBlocks(w);
  auto counted = [&](int j) {
    int n = 0;
    for (int i = bounds[j]; i < bounds[j + 1]; ++i) n += i >= first && i <= last;
    return n;
  };
  std::string text;
  for (int st = 0; st < stages; ++st) {
    if (st > 0) text += ",";
    for (int j = st; j < chunks; j += stages) {
      if (j > st) text += "+";
      text += std::to_string(counted(j));
    }
  }
  return text;
}

PipelineFigures LoweredPipelineFigures(const Workload& w, const std::vector<int>& bounds,
                                       int stages) {
  PipelineFigures f;
  f.partition = StagePartitionText(w, bounds, stages);
  f.stages = stages;
  return f;
}

}  // namespace stratasim
