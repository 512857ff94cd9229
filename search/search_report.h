// What `stratasim search` prints and writes (docs/search.md): the ranked table of the simulated
// plans with the analytic estimate beside each, search.json and search.csv (every plan that
// survived pruning, its estimate, and its simulated figures where it was simulated), and
// pareto.csv (the plans no other plan beats on both iteration time and peak memory).
// Deterministic: no wall-clock figure is written.
#ifndef STRATASIM_SEARCH_SEARCH_REPORT_H_
#define STRATASIM_SEARCH_SEARCH_REPORT_H_

#include <string>
#include <vector>

#include "report/results.h"
#include "search/rank.h"

namespace stratasim::search {

// The time and memory a plan is judged by: the simulated ones where it was simulated (and
// succeeded), else the analytic estimate's.
double JudgedTime(const RankedPlan& p);
double JudgedMemory(const RankedPlan& p);

// The simulated plans by simulated iteration time (failed ones last, by analytic rank), then
// nothing else: the rest are in the files.
std::vector<const RankedPlan*> SimulatedByTime(const SearchOutcome& o);

// Indices into o.ranked of the Pareto front of (JudgedTime, JudgedMemory) over all ranked plans.
std::vector<size_t> SearchParetoFront(const SearchOutcome& o);

// The console report: header (scenario, GPUs, model), the space and its pruning, the table of
// simulated plans, and a line on whether the analytic and simulated bests agree.
std::string FormatSearchTable(const RunResults& header, const SearchOutcome& o);

// search.json: {"format": "stratasim-search", "version": 1, scenario..., "space": {...},
// "plans": [...by analytic rank...], "best": {...}, "pareto": [names]}.
std::string SearchJson(const RunResults& header, const SearchOutcome& o);
// search.csv: one row per ranked plan, by analytic rank.
std::string SearchCsv(const SearchOutcome& o);
// pareto.csv: the front, fastest first.
std::string ParetoCsv(const SearchOutcome& o);

}  // namespace stratasim::search

#endif  // STRATASIM_SEARCH_SEARCH_REPORT_H_
