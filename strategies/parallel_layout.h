// How the ranks of a data x tensor x pipeline (x context) parallel plan are numbered.
//
// `order` lists the three dimensions from the fastest-varying to the slowest: "tpd" (the
// default) gives the t GPUs of a tensor group consecutive ranks, so that they share a server
// (NVLink/NVSwitch) whenever t divides its GPU count, then the p stages of a pipeline, then
// the d data-parallel replicas, as Megatron-LM's initialize_model_parallel places them when
// the slowest dimension is the one that tolerates the slowest links (Narayanan et al. 2021,
// SC, §3.3: tensor parallelism inside a server, pipeline and data parallelism across).
//
// Context parallelism (`context` c > 1, strategies/pipeline/context_parallel.h) adds a fourth
// dimension that varies right after the tensor index, wherever `order` puts t: "tpd" numbers
// t, then c, then p, then d, so that the c tensor groups holding one sequence's parts sit next
// to each other, as Megatron-Core's default order (tp-cp-ep-dp-pp) puts them.
//
// An explicit mapping (`ranks`, set by a planner that chose where each stage runs, e.g.
// AutoPipe-H's or HPH's device mapping; strategies/planners/planner.h) replaces the order: the
// rank of every (replica, stage, tensor index) is looked up. Context 1 only.
#ifndef STRATASIM_STRATEGIES_PARALLEL_LAYOUT_H_
#define STRATASIM_STRATEGIES_PARALLEL_LAYOUT_H_

#include <string>
#include <vector>

namespace stratasim {

struct ParallelLayout {
  int tensor = 1;
  int stages = 1;
  int data = 1;
  std::string order = "tpd";  // a permutation of 't', 'p', 'd', fastest first
  int context = 1;            // c: its index varies right after the tensor index
  // When not empty: ranks[(replica * stages + stage) * tensor + tp] is the rank of that
  // position, and `order` is not used. CheckRanks says whether it is a valid mapping.
  std::vector<int> ranks = {};

  // The rank of tensor index `tp` of context index `cp` of stage `stage` of replica `replica`.
  int Rank(int replica, int stage, int tp, int cp = 0) const;
  // The tensor group of (replica, stage, context index), in tensor-index order.
  std::vector<int> TensorGroup(int replica, int stage, int cp = 0) const;
  // The data-parallel group of (stage, tp) at context index 0, in replica order.
  std::vector<int> DataGroup(int stage, int tp) const;
  // The ranks that hold copies of the same parameters, whose gradients are reduced together:
  // the data x context ranks of (stage, tp), in rank order (DataGroup when c = 1).
  std::vector<int> GradientGroup(int stage, int tp) const;

  // Throws Error unless `ranks` is empty or a permutation of the `gpus` ranks 0..gpus-1 with
  // one entry per position (tensor x stages x data of them), with context 1.
  void CheckRanks(int gpus) const;

  // The orders Rank accepts.
  static std::vector<std::string> Orders();
};

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PARALLEL_LAYOUT_H_
