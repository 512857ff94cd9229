// `stratasim strategies [KIND] [--markdown]`: the strategy kinds, or one kind's options, from
// their declarations (core/strategy_options.h), so the listing cannot drift from the checks.
#ifndef STRATASIM_CLI_STRATEGIES_COMMAND_H_
#define STRATASIM_CLI_STRATEGIES_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace stratasim {

// Writes the listing on `out`; throws UsageError for an unknown kind or option.
int StrategiesCommand(const std::vector<std::string>& args, std::ostream& out);

}  // namespace stratasim

#endif  // STRATASIM_CLI_STRATEGIES_COMMAND_H_
