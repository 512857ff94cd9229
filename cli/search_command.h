// `stratasim search SCENARIO` (docs/search.md): enumerate the plans of the scenario's
// `search:` space, prune them by divisibility and memory, rank the rest with the analytic
// estimate (search/rank.h), simulate the best K with contention (`stratasim run`'s path, -j
// processes at once), print the ranked table and write search.json, search.csv and pareto.csv.
#ifndef STRATASIM_CLI_SEARCH_COMMAND_H_
#define STRATASIM_CLI_SEARCH_COMMAND_H_

#include <string>
#include <vector>

#include "search/rank.h"

namespace stratasim {

// Simulates o.ranked's first `k` plans of scenario `s` (its strategies are replaced by them),
// `jobs` at once, and stores each result in its plan. A plan that cannot be planned or
// simulated is stored as failed with the reason; the others still run. Progress goes to
// stderr.
void SimulateBest(const Scenario& s, int k, int jobs, search::SearchOutcome* o);

// Exit status: 0, or 1 when no simulated plan succeeded; throws UsageError / ConfigError.
int SearchCommand(const std::vector<std::string>& args, const std::string& version,
                  int default_jobs);

}  // namespace stratasim

#endif  // STRATASIM_CLI_SEARCH_COMMAND_H_
