// The `search:` section of a scenario (docs/search.md): the bounds of the plan space that
// `stratasim search` enumerates. A search scenario has cluster, model, training and
// (optionally) simulation as any scenario, and `search:` instead of `strategies:`.
//
//   search:
//     tensor: [1, 2, 4, 8]           # default: powers of two up to the smallest server's GPUs
//     pipeline: [1, 2, 4, 8, 16]     # default: powers of two up to the model's layers
//     micro_batch: [1, 2, 4]         # default: [1, 2, 4, 8]
//     schedule: [1f1b, interleaved]  # default: [1f1b, interleaved]; also gpipe
//     virtual_stages: [2, 4]         # default: [2]; interleaved only
//     recompute: [none, selective, full]      # default: all three
//     sequence_parallel: [false, true]        # default: both; tensor > 1 only
//     zero: [none, distributed_optimizer, zero1, zero2, zero3]   # default: all
//     rank_order: [tpd]              # default: [tpd]; any of the six permutations
//     top_k: 20                      # plans simulated with contention, default 20
//     memory_fraction: 0.95          # share of each GPU's memory a plan may fill
//
// The data degree is always GPUs / (tensor x pipeline): every plan uses the whole cluster.
#ifndef STRATASIM_SEARCH_SEARCH_SPEC_H_
#define STRATASIM_SEARCH_SEARCH_SPEC_H_

#include <string>
#include <vector>

#include "core/error.h"
#include "core/scenario.h"
#include "search/candidate.h"

namespace stratasim::search {

struct SearchSpec {
  std::vector<int> tensor;
  std::vector<int> pipeline;
  std::vector<int> micro_batch;
  std::vector<std::string> schedule;
  std::vector<int> virtual_stages;
  std::vector<Recompute> recompute;
  std::vector<bool> sequence_parallel;
  std::vector<Zero> zero;
  std::vector<std::string> rank_order;
  int top_k = 20;
  double memory_fraction = 0.95;
  SourceLocation where;  // of the `search` key
};

struct SearchScenario {
  Scenario scenario;  // no strategies: the search makes them
  SearchSpec search;
};

// Loads a search scenario (ConfigError, located, on any bad input: unknown keys, empty lists,
// values out of range, a `strategies:` list beside `search:`, a space over the bound on the
// number of candidates in core/limits.h).
SearchScenario LoadSearchScenarioFile(const std::string& path);
SearchScenario LoadSearchScenarioText(const std::string& text, const std::string& file_label);

}  // namespace stratasim::search

#endif  // STRATASIM_SEARCH_SEARCH_SPEC_H_
