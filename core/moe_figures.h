// What a mixture-of-experts planner decided that the simulated trace cannot show
// (docs/moe.md): the planner fills it (strategies/moe/moe_graph.h), the report reads it
// (report/moe_summary.h). Per-iteration figures are means over the measured iterations.
#ifndef STRATASIM_CORE_MOE_FIGURES_H_
#define STRATASIM_CORE_MOE_FIGURES_H_

namespace stratasim {

struct MoeFigures {
  int top_k = 0;                    // the gate's k
  double tokens_per_iteration = 0;  // tokens routed per iteration, over all GPUs
  // Mean over measured iterations and layers of the standard deviation over GPUs of the tokens
  // each computes: with every expert on its owner (before), and under the strategy's placement.
  double load_std_before = 0, load_std_after = 0;
  double dropped_tokens = 0;  // per iteration: tokens over the gate's capacity
  double replicas = 0;        // per iteration: expert copies, over all layers
  double transfer_bytes = 0;  // per iteration: replica parameters and gradients moved
  // The strategy is plain expert parallelism, the baseline the others' speed-up is measured
  // over (report/moe_table.h): DeepSpeed-MoE's planner sets it.
  bool baseline = false;
};

}  // namespace stratasim

#endif  // STRATASIM_CORE_MOE_FIGURES_H_
