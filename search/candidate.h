// One plan of `stratasim search`'s space (docs/search.md): the data, tensor and pipeline
// degrees, the micro-batch, the pipeline schedule, recomputation, sequence parallelism, how the
// model states are sharded and the rank order. Each candidate is an ordinary strategy entry
// (kind 3d, or ddp/zero1/zero2/zero3 when t = p = 1), so the simulator runs it as `stratasim
// run` would.
#ifndef STRATASIM_SEARCH_CANDIDATE_H_
#define STRATASIM_SEARCH_CANDIDATE_H_

#include <string>
#include <string_view>

#include "core/scenario.h"

namespace stratasim::search {

// How the model states are sharded over the data-parallel group. ZeRO's stages
// (Rajbhandari et al. 2020) are the data-parallel kinds zero1/zero2/zero3 (t = p = 1);
// Megatron-LM's distributed optimizer (ZeRO-1 inside a 3D plan) is kind 3d's option.
enum class Zero { kNone, kDistributedOptimizer, kZero1, kZero2, kZero3 };
// "none", "distributed_optimizer", "zero1", "zero2", "zero3".
std::string_view ToString(Zero z);

struct Candidate {
  int data = 1;
  int tensor = 1;
  int pipeline = 1;
  int micro_batch = 1;    // samples per micro-batch (training.micro_batch of the plan)
  int micro_batches = 1;  // m = global_batch / (micro_batch x data); 0 when not an integer
  // "gpipe", "1f1b" or "interleaved" when pipeline > 1; "" when pipeline == 1.
  std::string schedule;
  int virtual_stages = 1;  // >= 2 with schedule interleaved, else 1
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;  // tensor > 1 only
  Zero zero = Zero::kNone;
  std::string rank_order = "tpd";  // strategies/parallel_layout.h
};

// A short unique name usable as a strategy name: "d24-t8-p8-mb1-int2-full-sp-do-tpd"
// (gpipe "gp", 1f1b "1f1b", interleaved "int<v>"; zero "z1".."z3", distributed optimizer "do";
// parts that are off are left out).
std::string CandidateName(const Candidate& c);

// The strategy entry that runs `c`: kind 3d (tensor, stages, data, schedule, virtual_stages,
// sequence_parallel, distributed_optimizer, rank_order options) when t x p > 1, else kind ddp
// or zero1/zero2/zero3; the micro-batch and recomputation as the entry's own training and
// model choices (StrategySpec::own). `key_path` locates it in messages ("search.plans[3]").
StrategySpec ToStrategySpec(const Candidate& c, const std::string& key_path);

}  // namespace stratasim::search

#endif  // STRATASIM_SEARCH_CANDIDATE_H_
