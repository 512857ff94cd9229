// What a mixture-of-experts planner decided that the simulated trace cannot show
// (docs/moe.md): the planner fills it (strategies/moe/moe_graph.h), the report reads it
// (report/moe_summary.h). Per-iteration figures are means over the measured iterations.
#ifndef STRATASIM_CORE_MOE_FIGURES_H_
#define STRATASIM_CORE_MOE_FIGURES_H_

#include <vector>

namespace stratasim {

// At most this many GPUs get a per-GPU load series (MoeFigures::gpu_tokens_per_iteration):
// it costs measured iterations x GPUs numbers in results.json (100 x 1,024 is ~2 MB of text).
// Larger runs keep only the summary figures (load_std_*).
inline constexpr int kMaxMoeLoadSeriesGpus = 1024;

struct MoeFigures {
  int top_k = 0;                    // the gate's k
  double tokens_per_iteration = 0;  // tokens routed per iteration, over all GPUs
  // Mean over measured iterations and layers of the standard deviation over GPUs of the tokens
  // each computes: with every expert on its owner (before), and under the strategy's placement.
  double load_std_before = 0, load_std_after = 0;
  double dropped_tokens = 0;  // per iteration: tokens over the gate's capacity
  double replicas = 0;        // per iteration: expert copies, over all layers
  double transfer_bytes = 0;  // per iteration: replica parameters and gradients moved
  // Expert-data parallelism (DeepSpeed-MoE, Rajbhandari et al. 2022 §4): the experts are
  // spread over expert-parallel groups of `expert_parallel` GPUs (the all-to-all's members);
  // each expert is replicated over `expert_data_parallel` = GPUs / expert_parallel groups, its
  // gradients all-reduced among the copies. 0/1 until a planner sets them.
  int expert_parallel = 0;
  int expert_data_parallel = 1;
  // Persistent placements (Prophet, Pro-Prophet): per measured iteration, over all layers,
  // replicas created plus replicas dropped against the previous iteration's placement; the
  // fraction of (iteration, layer) pairs whose previous placement was kept; and the bytes of
  // replica transfers the placement moved less than re-sending every replica every iteration
  // would have (negative when keeping costs more).
  double placement_changes = 0;
  double placement_kept_fraction = 0;
  double transfer_bytes_saved = 0;
  // Per measured iteration, per GPU: the tokens the GPU computes under the strategy's
  // placement (the "after" load of load_std_after), mean over the MoE layers. Each row sums to
  // the tokens routed through a layer (tokens × top_k, less dropped ones). Empty above
  // kMaxMoeLoadSeriesGpus GPUs.
  std::vector<std::vector<double>> gpu_tokens_per_iteration;
  // The strategy is plain expert parallelism, the baseline the others' speed-up is measured
  // over (report/moe_table.h): DeepSpeed-MoE's planner sets it.
  bool baseline = false;
};

}  // namespace stratasim

#endif  // STRATASIM_CORE_MOE_FIGURES_H_
