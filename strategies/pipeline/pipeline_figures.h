// The pipeline figures (core/pipeline_figures.h) of a lowered partition.
#ifndef STRATASIM_STRATEGIES_PIPELINE_PIPELINE_FIGURES_H_
#define STRATASIM_STRATEGIES_PIPELINE_PIPELINE_FIGURES_H_

#include <string>
#include <vector>

#include "core/pipeline_figures.h"
#include "models/workload.h"

namespace stratasim {

// The partition text of `bounds` (the index in w.layers of each of the stages x
// virtual_stages chunks' first layer, then w.layers.size(); chunk j on stage j mod stages):
// per stage, the repeated blocks of its chunks, counted as PartitionFromCounts reads them (the
// embedding and the head are not counted; every layer is when the repeated blocks are not
// contiguous), chunks of one stage joined by '+'.
std::string StagePartitionText(const Workload& w, const std::vector<int>& bounds, int stages);

// The figures of a hand-chosen pipeline ("manual", no prediction) over `bounds`.
PipelineFigures LoweredPipelineFigures(const Workload& w, const std::vector<int>& bounds,
                                       int stages);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PIPELINE_PIPELINE_FIGURES_H_
