// Reading a search scenario's common sections (docs/search.md). LoadScenarioFile/Text
// (core/scenario.h) refuse a scenario with a `search:` section, naming the command that runs
// it; search/search_spec.cpp reads one with this function and then reads `search:` itself.
#ifndef STRATASIM_CORE_SCENARIO_SEARCH_H_
#define STRATASIM_CORE_SCENARIO_SEARCH_H_

#include <string>

#include "core/scenario.h"

namespace stratasim {

// Every section as LoadScenarioText reads it, except that `search:` is required (its contents
// are left to the caller) and replaces `strategies:`, which is refused beside it, as `jobs:`
// is: the result has no strategies.
Scenario LoadSearchBaseText(const std::string& text, const std::string& file_label);

}  // namespace stratasim

#endif  // STRATASIM_CORE_SCENARIO_SEARCH_H_
