// How the ranks of a data x tensor x pipeline parallel plan are numbered.
//
// `order` lists the three dimensions from the fastest-varying to the slowest: "tpd" (the
// default) gives the t GPUs of a tensor group consecutive ranks, so that they share a server
// (NVLink/NVSwitch) whenever t divides its GPU count, then the p stages of a pipeline, then
// the d data-parallel replicas, as Megatron-LM's initialize_model_parallel places them when
// the slowest dimension is the one that tolerates the slowest links (Narayanan et al. 2021,
// SC, §3.3: tensor parallelism inside a server, pipeline and data parallelism across).
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

  // The rank of tensor index `tp` of stage `stage` of replica `replica`.
  int Rank(int replica, int stage, int tp) const;
  // The tensor group of (replica, stage), in tensor-index order.
  std::vector<int> TensorGroup(int replica, int stage) const;
  // The data-parallel group of (stage, tp), in replica order.
  std::vector<int> DataGroup(int stage, int tp) const;

  // The orders Rank accepts.
  static std::vector<std::string> Orders();
};

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PARALLEL_LAYOUT_H_
