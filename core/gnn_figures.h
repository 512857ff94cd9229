// What a GNN feature-transfer planner decided that the simulated trace cannot show
// (docs/gnn.md): strategies/gnn/ fills it, report/gnn_table.h reads it. Per-iteration figures
// are means over the measured iterations, summed over the GPUs.
#ifndef STRATASIM_CORE_GNN_FIGURES_H_
#define STRATASIM_CORE_GNN_FIGURES_H_

namespace stratasim {

struct GnnFigures {
  double vertices_per_iteration = 0;   // input vertices of the sampled mini-batches
  double hits_per_iteration = 0;       // of them, found on the GPU (cache or kept batches)
  double h2d_bytes_per_iteration = 0;  // features copied host-to-device (misses x row bytes)
  // The most device memory one GPU holds for the cache or the kept batches (and their index),
  // beyond the current batch's own feature rows.
  double cache_bytes = 0;
  double HitRate() const {
    return vertices_per_iteration > 0 ? hits_per_iteration / vertices_per_iteration : 0;
  }
};

}  // namespace stratasim

#endif  // STRATASIM_CORE_GNN_FIGURES_H_
