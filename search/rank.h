// The first half of `stratasim search` (docs/search.md): enumerate the space, prune it before
// anything is simulated, and rank what is left by the analytic estimate. The second half
// (cli/search_command.cpp) simulates the best K with contention.
#ifndef STRATASIM_SEARCH_RANK_H_
#define STRATASIM_SEARCH_RANK_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/scenario.h"
#include "report/results.h"
#include "search/analytic.h"
#include "search/candidate.h"
#include "search/search_spec.h"
#include "search/space.h"

namespace stratasim::search {

struct RankedPlan {
  Candidate plan;
  std::string name;       // CandidateName
  Estimate estimate;      // with peak_memory_bytes from EstimateMemory
  int analytic_rank = 0;  // 1 = the lowest estimated iteration time
  // Set for the plans that were simulated (the best K): what `stratasim run` measures.
  std::optional<StrategyResult> simulated;
};

struct SearchOutcome {
  long long enumerated = 0;
  std::map<PruneReason, long long> pruned;
  // The plans that survived pruning, by estimated iteration time (ties by name), so that the
  // order does not depend on the enumeration's.
  std::vector<RankedPlan> ranked;
};

// Enumerate, Prune and EstimateIteration over `spec`'s space. Deterministic.
SearchOutcome RankPlans(const Scenario& s, const SearchSpec& spec);

// "pruned: 212 out of memory, 48 indivisible GPUs" (reasons by count, largest first, then by
// label; "pruned: none" when nothing was).
std::string DescribePruned(const std::map<PruneReason, long long>& pruned);

// The scenario that simulates `plans`: `s` with one strategy entry per plan (ToStrategySpec),
// keyed "search.plans[i]" in messages.
Scenario ScenarioOfPlans(const Scenario& s, const std::vector<const RankedPlan*>& plans);

}  // namespace stratasim::search

#endif  // STRATASIM_SEARCH_RANK_H_
