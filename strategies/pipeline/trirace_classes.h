// TriRace's three communication classes as the pipeline lowering takes them
// (strategies/pipeline/trirace.h documents the strategy; PipelineShape::classes). Off by
// default, which leaves every other pipeline kind as it was.
#ifndef STRATASIM_STRATEGIES_PIPELINE_TRIRACE_CLASSES_H_
#define STRATASIM_STRATEGIES_PIPELINE_TRIRACE_CLASSES_H_

namespace stratasim {

struct CommClasses {
  bool enabled = false;
  // Stream priorities (TaskGraph::SetStreamPriority, higher is more urgent): the point-to-point
  // activations and gradients are on the critical path of every micro-batch; the sparse
  // embedding rows are needed by stage 0's next step, the first the next batch's forward waits
  // for; the dense all-reduce has a whole accumulation window of slack (defer_dense).
  static constexpr int kPointToPointPriority = 2;
  static constexpr int kSparsePriority = 1;
  static constexpr int kDensePriority = 0;
  // The Adam step of batch k waits until just before the stage's first forward of batch k + 2
  // (PipeDream-2BW's delay of one version), so the dense all-reduce of batch k spreads over
  // batch k + 1's micro-batches instead of holding the compute stream.
  bool defer_dense = true;
  // Exchange the sparse embedding's gradient as its non-zero rows plus their indices (the model
  // has sparse_embedding) instead of all-reducing the whole table.
  bool sparse = false;
  double index_bytes = 8;  // per row index: int64, as torch.sparse_coo_tensor's indices
  // Put a class's collectives on its gated stream only where they share a link with a member
  // rank's point-to-point traffic (trirace_links.h); elsewhere nothing holds them.
  bool topology_aware = true;
};

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PIPELINE_TRIRACE_CLASSES_H_
